//! The repository of archives the archive tests share (tests/documents/archives.rs,
//! tests/heavy/spark.rs): zips with text members, a tar.gz, a zip nested five
//! deep, a zip cut in half, a mail message with attachments and a docx,
//! which is a document, not an archive.

use super::source_root;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

/// `n` lines of text; with `edit`, every tenth line rewritten.
pub fn text(n: usize, edit: bool) -> String {
    (0..n)
        .map(|i| {
            if edit && i % 10 == 4 {
                format!("line {i}: rewritten in the copy that went into the bundle\n")
            } else {
                format!(
                    "line {i}: support note {} about the printer queue\n",
                    i * 31 % 97
                )
            }
        })
        .collect()
}

pub fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in members {
        w.start_file(*name, opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A ustar archive of regular files, gzip'd.
pub fn tar_gz_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut tar = Vec::new();
    for (name, data) in members {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        h[124..135].copy_from_slice(format!("{:011o}", data.len()).as_bytes());
        h[136..147].copy_from_slice(b"00000000000");
        h[156] = b'0';
        h[257..265].copy_from_slice(b"ustar\x0000");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&b| b as u32).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        tar.extend_from_slice(&h);
        tar.extend_from_slice(data);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }
    tar.resize(tar.len() + 1024, 0);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&tar).unwrap();
    e.finish().unwrap()
}

/// Base64 in lines of 76, as mail writers wrap it.
pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for (i, c) in data.chunks(3).enumerate() {
        if i > 0 && i % 19 == 0 {
            out.push_str("\r\n");
        }
        let n = c.iter().fold(0u32, |n, &b| n << 8 | b as u32) << (8 * (3 - c.len()));
        for k in 0..4 {
            match k <= c.len() {
                true => out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

/// A message as a mail client sends it: a text body, then each (file
/// name, bytes) attached in base64.
pub fn mail_of(attachments: &[(&str, &[u8])]) -> Vec<u8> {
    let mut m = String::from(
        "From: Ann Example <ann@example.com>\r\nTo: support@example.com\r\nDate: Tue, 3 Nov 2026 10:00:00 +0000\r\nSubject: the notes, edited\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"==b1\"\r\n\r\n--==b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello, my edits are attached.\r\n",
    );
    for (name, data) in attachments {
        m.push_str(&format!(
            "--==b1\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=\"{name}\"\r\n\r\n{}\r\n",
            base64(data)
        ));
    }
    m.push_str("--==b1--\r\n");
    m.into_bytes()
}

pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(source_root().join("tests/data/documents").join(name)).unwrap()
}

/// The repository: a loose note and its edited version in a zip (with a
/// docx and a traversal name), a loose text and its copy in a tar.gz, a
/// loose docx, a zip nested five deep, a zip cut in half, and a mail
/// message with three attachments (another edit of the note, the docx of
/// the zip, a traversal name).
pub fn repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("notes")).unwrap();
    std::fs::write(repo.join("notes/a.txt"), text(80, false)).unwrap();
    std::fs::write(
        repo.join("other.txt"),
        text(50, false).replace("note", "memo"),
    )
    .unwrap();
    std::fs::write(repo.join("letter-v1.docx"), fixture("letter-v1.docx")).unwrap();
    let bundle = zip_of(&[
        ("notes/a.txt", text(80, true).as_bytes()),
        ("letter-v2.docx", &fixture("letter-v2.docx")),
        ("../../etc/x", b"a traversal name, kept as a name\n"),
    ]);
    std::fs::write(repo.join("bundle.zip"), &bundle).unwrap();
    let other = std::fs::read(repo.join("other.txt")).unwrap();
    std::fs::write(
        repo.join("copy.tar.gz"),
        tar_gz_of(&[("x/other.txt", &other)]),
    )
    .unwrap();
    let mut deep = zip_of(&[("deepest.txt", b"at the bottom\n")]);
    for level in 0..4 {
        deep = zip_of(&[(&format!("level{level}.zip"), &deep)]);
    }
    std::fs::write(repo.join("deep.zip"), deep).unwrap();
    std::fs::write(repo.join("broken.zip"), &bundle[..bundle.len() / 2]).unwrap();
    std::fs::create_dir_all(repo.join("mail")).unwrap();
    let mail = mail_of(&[
        ("a.txt", mailed_note().as_bytes()),
        ("letter-v2.docx", &fixture("letter-v2.docx")),
        ("../../etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n"),
    ]);
    std::fs::write(repo.join("mail/sent.eml"), mail).unwrap();
    repo
}

/// The note as edited in the mail: other lines than the zip's copy.
pub fn mailed_note() -> String {
    text(80, false)
        .replace("line 17:", "line 17 (sent):")
        .replace("line 53:", "line 53 (sent):")
}
