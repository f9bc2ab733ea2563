"""
This folder holds the minutes of the planning group for the spring term.
Each file is one meeting, named by its date, and the notes in it were
written by whoever chaired that meeting.

The group met every second Tuesday in the small room next to the
library. Attendance was good on the whole, although two meetings in
March were moved because of the open day and the inspection that
followed it.

Most of the discussion concerned the new timetable. Several teachers
asked whether the longer lessons on Thursday could be split, and the
head of science agreed to test the idea with two classes before the
summer.

Budget questions were left to the finance committee, which will report
in June. Until then, nobody should order new equipment without asking
the office first; the forms are on the shared drive under the usual
name.

If something in these notes is wrong, please say so at the next meeting
rather than editing the files, so that everyone can see what was changed
and why.
"""
