//! Man pages (roff, section 1) from a program's own `--help`, and for
//! `fsim` a SETTINGS section from the settings table, each default taken
//! from the Makefile's value in the table or else from the program that
//! receives the setting: nothing a page says is written twice.

use super::help::{Help, Item};
use fsim::driver::{Expect, Setting, SETTINGS};

/// Text escaped for roff: backslashes, hyphens, characters outside ASCII
/// (as `\[uXXXX]`, so groff needs no input encoding), and a line that
/// would start with a control character.
fn esc(text: &str) -> String {
    let mut t = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => t.push_str("\\e"),
            '-' => t.push_str("\\-"),
            c if c.is_ascii() => t.push(c),
            c => t += &format!("\\[u{:04X}]", c as u32),
        }
    }
    if t.starts_with(['.', '\'']) {
        format!("\\&{t}")
    } else {
        t
    }
}

/// The page of `program`, from its help; `defaults` gives the default of a
/// program's option (the programs' helps, for fsim's settings).
pub fn page(
    program: &str,
    version: &str,
    help: &Help,
    defaults: &dyn Fn(&Setting) -> String,
) -> String {
    let mut out = format!(
        ".TH {} 1 \"\" \"fsim {}\" \"User Commands\"\n",
        esc(&program.to_uppercase()),
        esc(version)
    );
    // NAME is the about's first clause; the description keeps the rest.
    let first = help.about.first().map(String::as_str).unwrap_or("");
    let (summary, cut) = match first.split_once(": ") {
        Some((s, _)) => (s, true),
        None => (first.trim_end_matches('.'), false),
    };
    out += &format!(".SH NAME\n{} \\- {}\n", esc(program), esc(summary));
    out += &format!(".SH SYNOPSIS\n.B {}\n", esc(&help.usage));
    let described = if cut {
        &help.about[..]
    } else {
        &help.about[1.min(help.about.len())..]
    };
    if !described.is_empty() {
        out += ".SH DESCRIPTION\n";
        paragraphs(&mut out, described);
    }
    for (title, items) in &help.sections {
        out += &format!(".SH {}\n", esc(&title.to_uppercase()));
        for item in items {
            entry(&mut out, item);
        }
    }
    if program == "fsim" {
        settings(&mut out, defaults);
    }
    out += ".SH SEE ALSO\nThe fsim-* programs' own pages; docs/usage.md and docs/pipeline.md \
            in the installed documentation (share/doc/fsim).\n";
    out
}

fn paragraphs(out: &mut String, paras: &[String]) {
    for (i, p) in paras.iter().enumerate() {
        if i > 0 {
            *out += ".PP\n";
        }
        *out += &esc(p);
        out.push('\n');
    }
}

fn entry(out: &mut String, item: &Item) {
    *out += &format!(".TP\n.B {}\n", esc(&item.term));
    for (i, p) in item.text.iter().enumerate() {
        if i > 0 {
            *out += ".IP\n";
        }
        *out += &esc(p);
        out.push('\n');
    }
}

/// fsim's SETTINGS section: every setting of the table, what it does,
/// what its value must be, its default and the stages it re-runs.
fn settings(out: &mut String, defaults: &dyn Fn(&Setting) -> String) {
    *out += ".SH SETTINGS\nWritten VAR=value before FOLDER (the settings of make report). \
             A new value re\\-runs the stages it names and what follows; a value no stage \
             would take is refused before any work.\n";
    for s in SETTINGS.iter().filter(|s| s.var != "REPO") {
        *out += &format!(
            ".TP\n.B {}\n{}.\n",
            esc(&format!("{}=", s.var)),
            esc(s.help)
        );
        let mut facts = Vec::new();
        if let Some((expect, _)) = s.value {
            facts.push(format!("Value: {}.", expect.what()));
        }
        let default = defaults(s);
        if !default.is_empty() {
            facts.push(format!("Default: {default}."));
        }
        if !s.stages.is_empty() {
            facts.push(format!("Re-runs: {}.", s.stages.join(", ")));
        }
        if !facts.is_empty() {
            *out += &format!(".IP\n{}\n", esc(&facts.join(" ")));
        }
    }
}

/// The default a setting has in a run: the table's (the Makefile's) value,
/// or else what `option` of `program` says it is, or "the program's".
pub fn setting_default(s: &Setting, helps: &dyn Fn(&str) -> Option<Help>) -> String {
    // A Makefile expression (the cores, the build folder) is said by the
    // setting's help; fsim's WORK is its own, not make's.
    if s.var == "WORK" {
        return format!("./{}", fsim::driver::DEFAULT_WORK);
    }
    if s.default.starts_with("$(") {
        return String::new();
    }
    if !s.default.is_empty() {
        return s.default.into();
    }
    let Some((program, option)) = s.flag else {
        return String::new();
    };
    let d =
        helps(program).and_then(|h| h.option(option).and_then(|i| i.default().map(String::from)));
    match d {
        Some(d) => format!("{d} ({program} {option})"),
        None => format!("{program}'s own ({option})"),
    }
}

/// Words a setting's value may be, for completions (empty: any).
pub fn value_words(s: &Setting) -> Vec<&'static str> {
    match s.value {
        Some((Expect::OneOf(words), _)) => words.to_vec(),
        Some((Expect::Formats, _)) => fsim::driver::FORMATS.to_vec(),
        _ => Vec::new(),
    }
}
