"""Minutes of the planning group: reading and listing them.

Each file is one meeting, named by its date. The notes in it were written
by whoever chaired that meeting, and they are never edited afterwards.
"""

import datetime
import os


class Meeting:
    """One meeting: its date, its chair and the text of its notes."""

    def __init__(self, path):
        self.path = path
        self.date = datetime.date.fromisoformat(os.path.basename(path)[:10])
        with open(path, encoding="utf-8") as fh:
            self.text = fh.read()

    def chair(self):
        """The name on the first line, which is always the chair's."""
        return self.text.splitlines()[0].strip()

    def words(self):
        return len(self.text.split())


def meetings(folder):
    """Every meeting in the folder, oldest first; other files are left out."""
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".txt") and name[:4].isdigit():
            out.append(Meeting(os.path.join(folder, name)))
    return out


if __name__ == "__main__":
    for m in meetings("."):
        print(m.date, m.chair(), m.words())
