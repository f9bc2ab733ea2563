//! A program's `--help` text read back into its parts: the about
//! paragraphs, the usage line and the titled lists of options. clap writes
//! every fsim program's long help in one shape (terms indented 2 or 6
//! spaces, their text 10), so the man pages and completions are generated
//! from what the program itself says, never written a second time.

/// One entry of a list: `-o, --output <OUT>` and its paragraphs.
#[derive(Debug, Default, PartialEq)]
pub struct Item {
    pub term: String,
    pub text: Vec<String>,
}

impl Item {
    /// The long option the entry names (`--output`), if any.
    pub fn long(&self) -> Option<&str> {
        self.term
            .split([',', ' ', '='])
            .find(|w| w.starts_with("--"))
    }

    /// The option names of the entry (`-o`, `--output`).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.term
            .split([',', ' ', '='])
            .filter(|w| w.starts_with('-') && w.len() > 1)
    }

    /// Whether the option takes a value (`<OUT>`).
    pub fn takes_value(&self) -> bool {
        self.term.contains('<')
    }

    /// The program's default for this option (`[default: 256M]`).
    pub fn default(&self) -> Option<&str> {
        self.text.iter().find_map(|p| {
            p.strip_prefix("[default: ")
                .and_then(|d| d.strip_suffix(']'))
        })
    }
}

/// A program's long help, in parts.
#[derive(Debug, Default, PartialEq)]
pub struct Help {
    pub about: Vec<String>,
    pub usage: String,
    pub sections: Vec<(String, Vec<Item>)>,
}

impl Help {
    /// Every option entry of every list.
    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.sections.iter().flat_map(|(_, items)| items)
    }

    /// The entry of a long option (`--memory`).
    pub fn option(&self, long: &str) -> Option<&Item> {
        self.items().find(|i| i.long() == Some(long))
    }
}

/// Where a description's text starts in clap's long help.
const TEXT_INDENT: usize = 10;

/// Read a long help text; `None` when it has no `Usage:` line (not a
/// clap program's help).
pub fn parse(text: &str) -> Option<Help> {
    let mut help = Help::default();
    let mut lines = text.lines();
    let mut para = String::new();
    for line in lines.by_ref() {
        if let Some(usage) = line.strip_prefix("Usage: ") {
            help.usage = usage.trim().to_string();
            break;
        }
        push_line(&mut help.about, &mut para, line.trim());
    }
    flush(&mut help.about, &mut para);
    if help.usage.is_empty() {
        return None;
    }
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if indent == 0 && trimmed.ends_with(':') {
            let title = trimmed.trim_end_matches(':').to_string();
            help.sections.push((title, Vec::new()));
            continue;
        }
        let Some((_, items)) = help.sections.last_mut() else {
            continue;
        };
        if !trimmed.is_empty() && indent < TEXT_INDENT {
            if let Some(last) = items.last_mut() {
                flush(&mut last.text, &mut para);
            }
            items.push(Item {
                term: trimmed.to_string(),
                text: Vec::new(),
            });
        } else if let Some(last) = items.last_mut() {
            push_line(&mut last.text, &mut para, trimmed);
        }
    }
    if let Some(last) = help.sections.last_mut().and_then(|(_, i)| i.last_mut()) {
        flush(&mut last.text, &mut para);
    }
    Some(help)
}

/// Add a line to the paragraph being read; a blank line ends it.
fn push_line(paras: &mut Vec<String>, para: &mut String, line: &str) {
    if line.is_empty() {
        flush(paras, para);
    } else {
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(line);
    }
}

fn flush(paras: &mut Vec<String>, para: &mut String) {
    if !para.is_empty() {
        paras.push(std::mem::take(para));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: &str = "Sort chunk records by hash.\n\nMemory: --memory for the\nrecord buffer.\n\n\
Usage: fsim-sort [OPTIONS] [INPUT]...\n\nArguments:\n  [INPUT]...\n          Chunk files\n\n\
Options:\n  -o, --output <OUT>\n          Output file\n\n      --memory <SIZE>\n          Memory budget\n          \n          [default: 256M]\n\n\
  -q, --quiet\n          No progress\n";

    #[test]
    fn reads_about_usage_and_options() {
        let h = parse(SORT).unwrap();
        assert_eq!(
            h.about,
            [
                "Sort chunk records by hash.",
                "Memory: --memory for the record buffer."
            ]
        );
        assert_eq!(h.usage, "fsim-sort [OPTIONS] [INPUT]...");
        let titles: Vec<_> = h.sections.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(titles, ["Arguments", "Options"]);
        let mem = h.option("--memory").unwrap();
        assert_eq!(mem.default(), Some("256M"));
        assert!(mem.takes_value());
        let out = h.option("--output").unwrap();
        assert_eq!(out.names().collect::<Vec<_>>(), ["-o", "--output"]);
        assert_eq!(out.text, ["Output file"]);
        assert!(!h.option("--quiet").unwrap().takes_value());
    }

    #[test]
    fn a_text_without_usage_is_not_a_help() {
        assert_eq!(parse("fsim-sort 0.1.0\n"), None);
    }
}
