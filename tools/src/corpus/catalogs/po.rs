//! A catalog written as GNU gettext writes it: header, entries, strings
//! cut into lines of at most 79 columns.

use super::super::{mix, unit};
use super::locales::Locale;
use super::template::Template;

/// A date `days` after 2019-01-01: (year, month, day).
fn date(mut days: u64) -> (u64, u64, u64) {
    let leap = |y: u64| y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
    let mut y = 2019;
    while days >= 365 + leap(y) as u64 {
        days -= 365 + leap(y) as u64;
        y += 1;
    }
    let months = [
        31,
        28 + leap(y) as u64,
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut m = 0;
    while days >= months[m] {
        days -= months[m];
        m += 1;
    }
    (y, m as u64 + 1, days + 1)
}

/// Columns of a character on a terminal: 2 for CJK, 1 for the others.
fn columns(c: char) -> usize {
    let wide = ('\u{1100}'..='\u{115f}').contains(&c)
        || ('\u{2e80}'..='\u{a4cf}').contains(&c)
        || ('\u{ac00}'..='\u{d7a3}').contains(&c)
        || ('\u{f900}'..='\u{faff}').contains(&c)
        || ('\u{ff00}'..='\u{ff60}').contains(&c);
    1 + wide as usize
}

/// `keyword "text"` as xgettext writes it: on one line if it fits in 79
/// columns and has no inner newline, else `keyword ""` and the text cut
/// after each `\n` and at spaces (or CJK characters) into quoted lines of
/// at most 79 columns.
fn po_string(out: &mut String, keyword: &str, text: &str) {
    let esc = text
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    let inner_newline = text.trim_end_matches('\n').contains('\n');
    if !inner_newline && keyword.len() + esc.chars().map(columns).sum::<usize>() + 3 <= 79 {
        out.push_str(&format!("{keyword} \"{esc}\"\n"));
        return;
    }
    out.push_str(keyword);
    out.push_str(" \"\"\n");
    for segment in esc.split_inclusive("\\n") {
        let (mut line, mut width) = (String::new(), 0);
        // Breaks after spaces and after wide characters (CJK).
        let tokens = segment.split_inclusive(|c: char| c == ' ' || columns(c) == 2);
        for tok in tokens {
            let n: usize = tok.chars().map(columns).sum();
            if width > 0 && width + n > 77 {
                out.push_str(&format!("\"{line}\"\n"));
                line.clear();
                width = 0;
            }
            line.push_str(tok);
            width += n;
        }
        if !line.is_empty() {
            out.push_str(&format!("\"{line}\"\n"));
        }
    }
}

/// The header of locale `loc`'s catalog of release `r` (`version`) of
/// `project`: the comments, the translators and the metadata entry.
fn header(out: &mut String, loc: &Locale, r: usize, version: &str, project: &str) {
    let h = |parts: &[u64]| mix(&[&[loc.key, r as u64][..], parts].concat());
    let (y, m, d) = date(r as u64 * 137 + 40);
    let pot = format!(
        "{y}-{m:02}-{d:02} {:02}:{:02}+0000",
        9 + r % 9,
        (r * 17) % 60
    );
    let (y2, m2, d2) = date(r as u64 * 137 + 40 + 1 + h(&[1]) % 90);
    let rev = format!(
        "{y2}-{m2:02}-{d2:02} {:02}:{:02}+0000",
        h(&[2]) % 24,
        h(&[3]) % 60
    );
    out.push_str(&format!(
        "# {project} translation ({code}).\n\
         # Copyright (C) 2015-{y} {project} contributors\n\
         # This file is distributed under the same license as the {project} package.\n\
         #\n# Translators:\n",
        code = loc.code
    ));
    let active: Vec<_> = loc.translators.iter().filter(|t| t.2 <= r).collect();
    for (i, (name, mail, joined)) in active.iter().enumerate() {
        let since = 2015 + (mix(&[loc.key, i as u64]) % 4) + *joined as u64;
        out.push_str(&format!("# {name} <{mail}>, {since}-{y}\n"));
    }
    let (last, last_mail, _) = active[active.len() - 1 - (h(&[4]) % active.len() as u64) as usize];
    out.push_str("#\nmsgid \"\"\nmsgstr \"\"\n");
    for field in [
        format!("Project-Id-Version: {project} {version}"),
        "Report-Msgid-Bugs-To: ".to_string(),
        format!("POT-Creation-Date: {pot}"),
        format!("PO-Revision-Date: {rev}"),
        format!("Last-Translator: {last} <{last_mail}>"),
        format!(
            "Language-Team: {c} <i18n-{c}@lists.example.org>",
            c = loc.code
        ),
        format!("Language: {}", loc.code),
        "MIME-Version: 1.0".to_string(),
        "Content-Type: text/plain; charset=UTF-8".to_string(),
        "Content-Transfer-Encoding: 8bit".to_string(),
        format!("Plural-Forms: {}", loc.plural.1),
    ] {
        out.push_str(&format!("\"{field}\\n\"\n"));
    }
}

/// Locale `loc`'s catalog of release `r` (`version`) of `project`.
pub(super) fn catalog(
    t: &Template,
    loc: &Locale,
    r: usize,
    version: &str,
    project: &str,
) -> String {
    let mut out = String::with_capacity(t.entries.len() * 300);
    header(&mut out, loc, r, version, project);
    // Translation progress: fewer entries missing at each release, more of
    // the new ones.
    let missing = loc.untranslated * 0.85f64.powi(r as i32);
    for e in &t.entries {
        out.push('\n');
        let mut line = String::from("#:");
        for &(s, n) in &e.refs {
            let r = format!(" {}:{n}", t.sources[s].path);
            if line.len() > 2 && line.len() + r.len() > 79 {
                out.push_str(&line);
                out.push('\n');
                line.truncate(2);
            }
            line.push_str(&r);
        }
        out.push_str(&line);
        out.push('\n');
        if e.python_format {
            out.push_str("#, python-format\n");
        }
        if let Some(c) = &e.ctxt {
            po_string(&mut out, "msgctxt", c);
        }
        po_string(&mut out, "msgid", &e.msgid);
        let fresh = if e.born == r && r > 0 { 0.3 } else { 0.0 };
        let translated = unit(mix(&[loc.key, e.key, 0x77])) >= missing + fresh;
        // Retranslated now and then (2 % per release).
        let revision = (e.born + 1..=r)
            .filter(|&q| unit(mix(&[loc.key, e.key, q as u64, 0xc4])) < 0.02)
            .count() as u64;
        let salt = mix(&[e.key, revision]);
        let text = |s: &str, form: u64| {
            if translated {
                loc.translate(s, mix(&[salt, form]))
            } else {
                String::new()
            }
        };
        match &e.plural {
            None => po_string(&mut out, "msgstr", &text(&e.msgid, 0)),
            Some(p) => {
                po_string(&mut out, "msgid_plural", p);
                for i in 0..loc.plural.0 {
                    let s = if i == 0 { &e.msgid } else { p };
                    po_string(&mut out, &format!("msgstr[{i}]"), &text(s, i as u64));
                }
            }
        }
    }
    out
}
