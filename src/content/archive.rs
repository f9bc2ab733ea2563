//! Archives as entries (docs/documents.md, "Archives"): the
//! members of a zip, tar or tar.gz file, and the attachments of a mail
//! message, each handed out with its **entry name** and its bytes, so
//! that a member can be compared with loose files like any other file.
//!
//! Entry names: `ARCHIVE!/MEMBER`, nested `ARCHIVE!/inner.zip!/MEMBER`
//! ([`MAX_ARCHIVE_DEPTH`] archives deep). Inside a member's name every `!`
//! is written `!!`, so `!/` in an entry name is always a separator; the
//! archive's own path is left as walked (the file table knows where it
//! ends). Member names are names only: `../x`, `/etc/passwd` or `a\b` are
//! kept as they are, never resolved and never written to disk. An
//! attachment is named by its base name (`content::mail::member_name`:
//! `../../etc/passwd` is `passwd`), made unique within its message
//! (`a.txt`, `a~2.txt`).
//!
//! Bounded: members are read one at a time through
//! [`read_bounded`](super::read_bounded) (each at most `max_bytes`, at most
//! `max_ratio` times its compressed size), at most `max_input` bytes in all
//! and `max_members` members (nested ones counted), within the deadline.
//! A member that cannot be read is left out and the archive gets a note
//! (the first reason, and how many were left out); an archive whose
//! directory or headers are unreadable has no members and a note. Nothing
//! here panics on hostile bytes (the caller's `catch_unwind` is the net).

use std::io::{Cursor, Read};

use super::{read_bounded, Budget, Fail, Limits};
use crate::formats::LeftOut;

/// Archives inside archives read at most this deep (the outer archive is
/// depth 1): a zip of zips of zips is read, a fourth level is a member
/// like any other, with a note.
pub const MAX_ARCHIVE_DEPTH: usize = 3;

/// Longest GNU long name or pax header record read.
const MAX_HEADER_DATA: u64 = 64 << 10;

/// The archive formats whose members become entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveKind {
    Zip,
    Tar,
    TarGz,
    /// A mail message (RFC 5322 with MIME): its attachments.
    Mail,
}

/// One member: its entry name below the archive (`dir/a.txt`,
/// `inner.zip!/b.txt`) and its bytes.
#[derive(Debug)]
pub struct Member {
    pub name: Vec<u8>,
    pub bytes: Vec<u8>,
}

/// What reading an archive's members gave besides them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Expanded {
    /// Members handed out.
    pub members: usize,
    /// Members left out (unreadable, over a limit).
    pub left_out: usize,
    /// The first reason a member was left out or reading stopped.
    pub note: Option<String>,
    /// What kind of reason `note` is: what the file table records.
    pub reason: Option<LeftOut>,
}

impl Expanded {
    fn fail(&mut self, kind: LeftOut, why: String) {
        self.left_out += 1;
        self.note(kind, why);
    }

    /// Record the first note and its kind.
    fn note(&mut self, kind: LeftOut, why: String) {
        if self.note.is_none() {
            self.note = Some(why);
            self.reason = Some(kind);
        }
    }
}

/// The kind of a [`read_bounded`] failure of `what`: its I/O errors
/// (`what: error`: a bad CRC, a truncated stream) are damage, the rest
/// (size, ratio, time) limits.
fn read_failure(why: &str, what: &str) -> LeftOut {
    match why.strip_prefix(what) {
        Some(rest) if rest.starts_with(": ") => LeftOut::Broken,
        _ => LeftOut::Limit,
    }
}

/// The archive kind of `data`, by its bytes: a zip's local header (or the
/// end record of an empty zip), a tar's `ustar` magic with a valid header
/// checksum, a gzip stream whose first 512 decompressed bytes are such a
/// tar header, a mail message's header block (as [`super::detect`] tells
/// one). A zip that is a document (docx, odt, epub) is a document, not an
/// archive: the caller asks [`super::detect`] first. A message without
/// attachments is an archive without members.
pub fn archive_kind(data: &[u8]) -> Option<ArchiveKind> {
    if data.starts_with(b"PK\x03\x04") || data.starts_with(b"PK\x05\x06") {
        return Some(ArchiveKind::Zip);
    }
    if data.len() >= 512 && tar_header_ok(&data[..512]) {
        return Some(ArchiveKind::Tar);
    }
    if data.starts_with(b"\x1f\x8b\x08") {
        let mut head = Vec::new();
        let mut gz = flate2::read::MultiGzDecoder::new(data);
        let _ = (&mut gz).take(512).read_to_end(&mut head);
        if head.len() == 512 && tar_header_ok(&head) {
            return Some(ArchiveKind::TarGz);
        }
    }
    super::detect::is_mail(data).then_some(ArchiveKind::Mail)
}

/// Hand every member of `data` (an archive of `kind`) to `each`, nested
/// archives' members too (after the member that holds them), under
/// `limits`.
pub fn members(
    data: &[u8],
    kind: ArchiveKind,
    limits: &Limits,
    each: &mut dyn FnMut(&Member),
) -> Expanded {
    let budget = Budget::new(limits);
    let mut walk = Walk {
        budget: &budget,
        read: 0,
        out: Expanded::default(),
        each,
    };
    walk.archive(data, kind, &[], 1);
    walk.out
}

/// One archive read, nested ones included.
struct Walk<'a, 'b> {
    budget: &'a Budget<'a>,
    /// Bytes of members read, in all.
    read: u64,
    out: Expanded,
    each: &'b mut dyn FnMut(&Member),
}

/// Why reading an archive stops altogether (a limit on the whole, a
/// broken directory): the note, already recorded.
struct Stop;

impl Walk<'_, '_> {
    fn archive(&mut self, data: &[u8], kind: ArchiveKind, prefix: &[u8], depth: usize) {
        // A stop has recorded its note; the archive's other members stay.
        let _stopped: Result<(), Stop> = match kind {
            ArchiveKind::Zip => self.zip(data, prefix, depth),
            ArchiveKind::Tar => self.tar(&mut &data[..], None, prefix, depth),
            ArchiveKind::TarGz => {
                let mut gz = flate2::read::MultiGzDecoder::new(data);
                self.tar(&mut gz, Some(data.len() as u64), prefix, depth)
            }
            ArchiveKind::Mail => self.mail(data, prefix, depth),
        };
    }

    /// A mail message: each attachment a member, named by
    /// [`super::mail::member_name`], a repeated name numbered (`a~2.txt`)
    /// so that every entry names one member (a reader finds a member by
    /// its name). Its decoded bytes are at most the message's, so only
    /// `max_bytes` is checked (a member over it is left out); the MIME
    /// walk's own limits (parts, depth, time) stop the message.
    fn mail(&mut self, data: &[u8], prefix: &[u8], depth: usize) -> Result<(), Stop> {
        let budget = self.budget;
        let mut names = Names::default();
        let mut n = 0;
        let mut stopped = Ok(());
        let walked = super::mail::attachments(data, budget, &mut |raw, bytes| {
            n += 1;
            let name = names.unique(super::mail::member_name(raw.as_deref(), n));
            stopped = self.attachment(entry_name(prefix, name.as_bytes()), bytes, depth);
            stopped.is_ok()
        });
        stopped?;
        walked.map_err(|why| {
            let kind = match why.contains("boundary") {
                true => LeftOut::Broken,
                false => LeftOut::Limit,
            };
            self.stop(kind, format!("{}{why}", shown(prefix)))
        })
    }

    /// One attachment: counted, left out over `max_bytes`, else a member.
    fn attachment(&mut self, name: Vec<u8>, bytes: Vec<u8>, depth: usize) -> Result<(), Stop> {
        self.count(&name)?;
        let max = self.budget.limits.max_bytes;
        if bytes.len() as u64 > max {
            let why = format!(
                "member {} is {} bytes, more than the size limit of {max}",
                String::from_utf8_lossy(&name),
                bytes.len()
            );
            self.out.fail(LeftOut::Limit, why);
            return Ok(());
        }
        self.member(name, bytes, depth)
    }

    fn zip(&mut self, data: &[u8], prefix: &[u8], depth: usize) -> Result<(), Stop> {
        let mut zip = match zip::ZipArchive::new(Cursor::new(data)) {
            Ok(z) => z,
            Err(e) => {
                let why = format!("{}bad zip: {e}", shown(prefix));
                return Err(self.stop(LeftOut::Broken, why));
            }
        };
        for i in 0..zip.len() {
            let mut m = match zip.by_index(i) {
                Ok(m) => m,
                Err(e) => {
                    let why = format!("{}member {i}: {e}", shown(prefix));
                    self.out.fail(LeftOut::Broken, why);
                    continue;
                }
            };
            if m.is_dir() {
                continue;
            }
            let raw_name = m.name_raw().to_vec();
            let name = entry_name(prefix, &raw_name);
            self.count(&name)?;
            let what = format!("member {}", String::from_utf8_lossy(&name));
            if m.size() > self.budget.limits.max_bytes {
                self.out.fail(
                    LeftOut::Limit,
                    format!(
                        "{what} declares {} bytes, more than the size limit of {}",
                        m.size(),
                        self.budget.limits.max_bytes
                    ),
                );
                continue;
            }
            let packed = m.compressed_size();
            match read_bounded(&mut m, self.budget, Some(packed), &what) {
                Ok(bytes) => self.member(name, bytes, depth)?,
                Err(why) => self.out.fail(read_failure(&why, &what), why),
            }
        }
        Ok(())
    }

    /// A tar stream: 512-byte headers, each followed by its data padded to
    /// 512; GNU long names (`L`) and pax `path=` records name the next
    /// member; directories, links and devices are skipped. `packed`: the
    /// compressed size of a tar.gz, the input each member's ratio is
    /// checked against.
    fn tar(
        &mut self,
        r: &mut dyn Read,
        packed: Option<u64>,
        prefix: &[u8],
        depth: usize,
    ) -> Result<(), Stop> {
        let mut long_name: Option<Vec<u8>> = None;
        let mut header = [0u8; 512];
        loop {
            match read_exact_or_end(r, &mut header) {
                Ok(false) => return Ok(()),
                Ok(true) => {}
                Err(e) => {
                    let why = format!("{}truncated tar: {e}", shown(prefix));
                    return Err(self.stop(LeftOut::Broken, why));
                }
            }
            if header.iter().all(|&b| b == 0) {
                return Ok(());
            }
            if !tar_header_ok(&header) {
                let why = format!("{}bad tar header checksum", shown(prefix));
                return Err(self.stop(LeftOut::Broken, why));
            }
            let Some(size) = octal(&header[124..136]) else {
                let why = format!("{}bad tar member size", shown(prefix));
                return Err(self.stop(LeftOut::Broken, why));
            };
            let flag = header[156];
            let take = match flag {
                b'L' | b'x' => MAX_HEADER_DATA,
                _ => self.budget.limits.max_bytes,
            };
            if size > take {
                return Err(self.stop(
                    LeftOut::Limit,
                    format!(
                        "{}tar member of {size} bytes, more than the size limit of {take}",
                        shown(prefix)
                    ),
                ));
            }
            let pad = (512 - size % 512) % 512;
            let what = format!("{}tar member", shown(prefix));
            let data = match read_bounded(&mut (&mut *r).take(size), self.budget, packed, &what) {
                Ok(d) if d.len() as u64 == size => d,
                Ok(_) => return Err(self.stop(LeftOut::Broken, format!("{what}: truncated"))),
                Err(why) => return Err(self.stop(read_failure(&why, &what), why)),
            };
            if std::io::copy(&mut (&mut *r).take(pad), &mut std::io::sink()).is_err() {
                return Err(self.stop(LeftOut::Broken, format!("{what}: truncated")));
            }
            match flag {
                b'L' => long_name = Some(trim_nul(&data).to_vec()),
                b'x' => long_name = pax_path(&data).or(long_name),
                b'0' | 0 | b'7' => {
                    let raw = long_name.take().unwrap_or_else(|| ustar_name(&header));
                    let name = entry_name(prefix, &raw);
                    self.count(&name)?;
                    self.member(name, data, depth)?;
                }
                _ => long_name = None,
            }
        }
    }

    /// One more member, or the stop at `max_members`.
    fn count(&mut self, name: &[u8]) -> Result<(), Stop> {
        if self.out.members >= self.budget.limits.max_members {
            return Err(self.stop(
                LeftOut::Limit,
                format!(
                    "more than {} members (at {}): the rest are not read",
                    self.budget.limits.max_members,
                    String::from_utf8_lossy(name)
                ),
            ));
        }
        Ok(())
    }

    /// Hand a member out, then read it as an archive when it is one.
    fn member(&mut self, name: Vec<u8>, bytes: Vec<u8>, depth: usize) -> Result<(), Stop> {
        self.read += bytes.len() as u64;
        if self.read > self.budget.limits.max_input {
            return Err(self.stop(
                LeftOut::Limit,
                format!(
                    "members expand to more than {} bytes in all: the rest are not read",
                    self.budget.limits.max_input
                ),
            ));
        }
        self.out.members += 1;
        let member = Member { name, bytes };
        (self.each)(&member);
        // A zip that is a document (docx, odt, epub) is read as one.
        let nested = archive_kind(&member.bytes).filter(|&k| {
            k != ArchiveKind::Zip
                || super::detect(&mut Cursor::new(&member.bytes[..])) == super::Kind::Raw
        });
        match nested {
            Some(kind) if depth < MAX_ARCHIVE_DEPTH => {
                let mut prefix = member.name;
                prefix.extend_from_slice(b"!/");
                self.archive(&member.bytes, kind, &prefix, depth + 1);
            }
            Some(_) => {
                self.out.note(LeftOut::Deep, format!(
                    "{}: an archive nested more than {MAX_ARCHIVE_DEPTH} deep, its members are not read",
                    String::from_utf8_lossy(&member.name)
                ));
            }
            None => {}
        }
        Ok(())
    }

    fn stop(&mut self, kind: LeftOut, why: Fail) -> Stop {
        self.out.note(kind, why);
        Stop
    }
}

/// The names given to one message's attachments so far.
#[derive(Default)]
struct Names {
    used: std::collections::HashSet<String>,
    /// The next number to try per name (a hostile message repeating one
    /// name 10,000 times costs one lookup each, not a count from 2).
    next: std::collections::HashMap<String, usize>,
}

impl Names {
    /// `name`, or, when taken, `stem~K.ext` with the first free K from 2.
    fn unique(&mut self, name: String) -> String {
        if self.used.insert(name.clone()) {
            return name;
        }
        let (stem, ext) = match name.rfind('.') {
            Some(i) if i > 0 => (&name[..i], &name[i..]),
            _ => (&name[..], ""),
        };
        let k = self.next.entry(name.clone()).or_insert(2);
        loop {
            let candidate = format!("{stem}~{k}{ext}");
            *k += 1;
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

/// `prefix` then `name` with every `!` doubled (a member's entry name).
pub fn entry_name(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = prefix.to_vec();
    for &b in name {
        out.push(b);
        if b == b'!' {
            out.push(b'!');
        }
    }
    out
}

/// The names in an entry name below its archive (`a!!b/c.zip!/d` gives
/// `a!b/c.zip` and `d`): the inverse of [`entry_name`] over its levels.
pub fn split_entry_name(entry: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut i = 0;
    while i < entry.len() {
        match (entry[i], entry.get(i + 1)) {
            (b'!', Some(b'!')) => {
                out.last_mut().expect("one level at least").push(b'!');
                i += 2;
            }
            (b'!', Some(b'/')) => {
                out.push(Vec::new());
                i += 2;
            }
            (b, _) => {
                out.last_mut().expect("one level at least").push(b);
                i += 1;
            }
        }
    }
    out
}

/// `prefix` for a note: `inner.zip!/: ` or nothing.
fn shown(prefix: &[u8]) -> String {
    if prefix.is_empty() {
        String::new()
    } else {
        format!("{}: ", String::from_utf8_lossy(&prefix[..prefix.len() - 2]))
    }
}

/// Fill `buf`: false at a clean end before its first byte, an error when
/// the stream ends inside it.
fn read_exact_or_end(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// A ustar or GNU tar header: the magic at 257 and the checksum at 148
/// (the header's bytes summed with the checksum field as spaces).
fn tar_header_ok(h: &[u8]) -> bool {
    if &h[257..262] != b"ustar" {
        return false;
    }
    let sum: u64 = h
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                b as u64
            }
        })
        .sum();
    octal(&h[148..156]) == Some(sum)
}

/// An octal field (NUL or space terminated); base-256 sizes are refused.
fn octal(f: &[u8]) -> Option<u64> {
    let digits: &[u8] = trim_nul(f).trim_ascii();
    if digits.is_empty() || f[0] & 0x80 != 0 {
        return if digits.is_empty() { Some(0) } else { None };
    }
    digits.iter().try_fold(0u64, |n, &d| {
        (b'0'..=b'7')
            .contains(&d)
            .then(|| n.checked_mul(8)?.checked_add((d - b'0') as u64))?
    })
}

fn trim_nul(f: &[u8]) -> &[u8] {
    &f[..f.iter().position(|&b| b == 0).unwrap_or(f.len())]
}

/// A ustar member's name: its prefix field, `/`, its name field.
fn ustar_name(h: &[u8]) -> Vec<u8> {
    let (name, prefix) = (trim_nul(&h[0..100]), trim_nul(&h[345..500]));
    if prefix.is_empty() {
        return name.to_vec();
    }
    [prefix, b"/", name].concat()
}

/// The `path=` record of a pax extended header (`LEN path=VALUE\n`).
fn pax_path(data: &[u8]) -> Option<Vec<u8>> {
    let mut rest = data;
    while !rest.is_empty() {
        let sp = rest.iter().position(|&b| b == b' ')?;
        let len: usize = std::str::from_utf8(&rest[..sp]).ok()?.parse().ok()?;
        if len <= sp || len > rest.len() {
            return None;
        }
        let rec = &rest[sp + 1..len];
        if let Some(v) = rec.strip_prefix(b"path=") {
            return Some(v.strip_suffix(b"\n").unwrap_or(v).to_vec());
        }
        rest = &rest[len..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::tests::zip_of;
    use std::io::Write;

    /// A ustar header for `name` (split into prefix and name when long)
    /// with `size` bytes of type `flag`.
    fn tar_header(name: &[u8], size: usize, flag: u8) -> [u8; 512] {
        let mut h = [0u8; 512];
        h[..name.len().min(100)].copy_from_slice(&name[..name.len().min(100)]);
        h[100..107].copy_from_slice(b"0000644");
        h[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
        h[136..147].copy_from_slice(b"00000000000");
        h[156] = flag;
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&b| b as u32).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        h
    }

    fn tar_of(members: &[(&[u8], &[u8], u8)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, data, flag) in members {
            out.extend_from_slice(&tar_header(name, data.len(), *flag));
            out.extend_from_slice(data);
            out.resize(out.len().div_ceil(512) * 512, 0);
        }
        out.resize(out.len() + 1024, 0);
        out
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Every member as (entry name, bytes), and what else was found.
    fn all(data: &[u8], limits: &Limits) -> (Vec<(String, Vec<u8>)>, Expanded) {
        let kind = archive_kind(data).expect("an archive");
        let mut got = Vec::new();
        let e = members(data, kind, limits, &mut |m| {
            got.push((
                String::from_utf8_lossy(&m.name).into_owned(),
                m.bytes.clone(),
            ))
        });
        (got, e)
    }

    fn names(got: &[(String, Vec<u8>)]) -> Vec<&str> {
        got.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn zip_members_are_entries_with_escaped_names() {
        let z = zip_of(&[
            ("dir/a.txt", b"alpha\n"),
            ("dir/", b""),
            ("wow!/b.txt", b"beta\n"),
            ("../../etc/passwd", b"root\n"),
            ("/abs.txt", b"abs\n"),
        ]);
        let (got, e) = all(&z, &Limits::default());
        assert_eq!(
            names(&got),
            ["dir/a.txt", "wow!!/b.txt", "../../etc/passwd", "/abs.txt"]
        );
        assert_eq!(got[0].1, b"alpha\n");
        assert_eq!(
            e,
            Expanded {
                members: 4,
                left_out: 0,
                note: None,
                reason: None,
            }
        );
        // The names split back into their levels; traversal names are
        // names, kept as they are.
        let nested = entry_name(b"in!.zip!/", b"x!/y");
        assert_eq!(nested, b"in!.zip!/x!!/y");
        assert_eq!(
            split_entry_name(&entry_name(&entry_name(b"", b"in!.zip"), b"!/x!/y")),
            [b"in!.zip!/x!/y".to_vec()]
        );
        assert_eq!(
            split_entry_name(b"in!!.zip!/x!!/y"),
            [b"in!.zip".to_vec(), b"x!/y".to_vec()]
        );
    }

    #[test]
    fn nested_archives_are_read_to_the_depth_limit() {
        let inner = zip_of(&[("c.txt", b"gamma\n")]);
        let tgz = gzip(&tar_of(&[(b"t/inner.zip", &inner, b'0')]));
        let outer = zip_of(&[("x.tar.gz", &tgz), ("d.txt", b"delta\n")]);
        let (got, e) = all(&outer, &Limits::default());
        assert_eq!(
            names(&got),
            [
                "x.tar.gz",
                "x.tar.gz!/t/inner.zip",
                "x.tar.gz!/t/inner.zip!/c.txt",
                "d.txt"
            ]
        );
        assert_eq!(e.note, None);
        // One level more: the fourth archive is a member, not read.
        let deeper = zip_of(&[("o.zip", &outer)]);
        let (got, e) = all(&deeper, &Limits::default());
        assert_eq!(
            names(&got),
            [
                "o.zip",
                "o.zip!/x.tar.gz",
                "o.zip!/x.tar.gz!/t/inner.zip",
                "o.zip!/d.txt"
            ]
        );
        assert_eq!(
            e.note.as_deref(),
            Some("o.zip!/x.tar.gz!/t/inner.zip: an archive nested more than 3 deep, its members are not read")
        );
        assert_eq!(e.reason, Some(LeftOut::Deep));
    }

    #[test]
    fn a_zip_bomb_member_is_left_out_with_a_note() {
        let zeros = vec![0u8; 24 << 20];
        let z = zip_of(&[("bomb.bin", &zeros), ("ok.txt", b"fine\n")]);
        assert!(z.len() < 100_000);
        let (got, e) = all(&z, &Limits::default());
        assert_eq!(names(&got), ["ok.txt"]);
        assert_eq!(e.left_out, 1);
        assert_eq!(e.reason, Some(LeftOut::Limit));
        let note = e.note.unwrap();
        assert!(
            note.starts_with("member bomb.bin expands more than 200:1"),
            "{note}"
        );
        // The size cap in all: two members of 3 MiB under a 4 MiB input.
        let three = vec![b'x'; 3 << 20];
        let z = zip_of(&[("a", &three), ("b", &three), ("c", b"c")]);
        let limits = Limits {
            max_input: 4 << 20,
            max_ratio: 1 << 20,
            ..Limits::default()
        };
        let (got, e) = all(&z, &limits);
        assert_eq!(names(&got), ["a"]);
        assert_eq!(
            e.note.as_deref(),
            Some("members expand to more than 4194304 bytes in all: the rest are not read")
        );
    }

    #[test]
    fn broken_archives_are_notes() {
        let z = zip_of(&[("a.txt", b"alpha\n"), ("b.txt", b"beta\n")]);
        let (got, e) = all(&z[..z.len() / 2], &Limits::default());
        assert!(got.is_empty());
        assert_eq!(e.reason, Some(LeftOut::Broken));
        assert!(e.note.unwrap().starts_with("bad zip: "));
        let t = tar_of(&[
            (b"a.txt", &[b'a'; 700], b'0'),
            (b"b.txt", &[b'b'; 700], b'0'),
        ]);
        let (got, e) = all(&t[..2300], &Limits::default());
        assert_eq!(names(&got), ["a.txt"]);
        assert_eq!(e.note.as_deref(), Some("tar member: truncated"));
        assert_eq!(e.reason, Some(LeftOut::Broken));
        let mut bad = t.clone();
        bad[1536] ^= 1; // the second header's first byte: its checksum fails
        let (got, e) = all(&bad, &Limits::default());
        assert_eq!(names(&got), ["a.txt"]);
        assert_eq!(e.note.as_deref(), Some("bad tar header checksum"));
        // Over the member limit: the first ones, and a note.
        let many: Vec<(String, Vec<u8>)> =
            (0..22).map(|i| (format!("m{i}"), vec![b'x'; 3])).collect();
        let refs: Vec<(&str, &[u8])> = many.iter().map(|(n, d)| (n.as_str(), &d[..])).collect();
        let limits = Limits {
            max_members: 10,
            ..Limits::default()
        };
        let (got, e) = all(&zip_of(&refs), &limits);
        assert_eq!(got.len(), 10);
        assert_eq!(
            e.note.as_deref(),
            Some("more than 10 members (at m10): the rest are not read")
        );
    }

    #[test]
    fn tar_names_long_and_pax() {
        let long = [b'd'; 150]
            .iter()
            .chain(b"/file.txt")
            .copied()
            .collect::<Vec<u8>>();
        let pax = b"29 path=pax/named/member.txt\n";
        let t = tar_of(&[
            (b"././@LongLink", &long, b'L'),
            (b"ignored", b"one\n", b'0'),
            (b"PaxHeaders/x", pax, b'x'),
            (b"ignored2", b"two\n", b'0'),
            (b"dir/", b"", b'5'),
            (b"link", b"", b'2'),
            (b"plain.txt", b"three\n", b'0'),
        ]);
        let (got, e) = all(&t, &Limits::default());
        let long = String::from_utf8(long).unwrap();
        assert_eq!(
            names(&got),
            [long.as_str(), "pax/named/member.txt", "plain.txt"]
        );
        assert_eq!(got[2].1, b"three\n");
        assert_eq!(e.note, None);
        assert_eq!(archive_kind(&gzip(&t)), Some(ArchiveKind::TarGz));
        assert_eq!(archive_kind(b"just text"), None);
    }

    /// Damaged archives (bits flipped, cut, a slice zeroed, a slice
    /// duplicated; deterministic) never panic, never hand out more than
    /// the limits allow, and stay quick: each is members or a note.
    /// Base64 in lines of 76, as mail writers wrap it.
    fn base64(data: &[u8]) -> String {
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

    /// A multipart/mixed message: a text body, then each (headers of the
    /// part, body) given.
    fn mail_of(parts: &[(&str, String)]) -> Vec<u8> {
        let mut m = String::from(
            "From: Ann <ann@example.com>\r\nTo: bob@example.com\r\nDate: Tue, 3 Nov 2026 10:00:00 +0000\r\nSubject: the notes\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"XyZ\"\r\n\r\n--XyZ\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello, the notes are attached.\r\n",
        );
        for (h, body) in parts {
            m.push_str(&format!("--XyZ\r\n{h}\r\n\r\n{body}\r\n"));
        }
        m.push_str("--XyZ--\r\n");
        m.into_bytes()
    }

    /// A part's headers: `type`, base64, attached as `name`.
    fn attached(mime: &str, name: &str) -> String {
        format!("Content-Type: {mime}\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=\"{name}\"")
    }

    #[test]
    fn mail_attachments_are_members_named_by_their_base_names() {
        let docx = zip_of(&[("word/document.xml", b"<w:document/>")]);
        let inner = zip_of(&[("c.txt", b"gamma\n")]);
        // A message inside: its own boundary.
        let forwarded = mail_of(&[(&attached("text/plain", "inner.txt"), base64(b"inner\n"))]);
        let forwarded = String::from_utf8(forwarded).unwrap().replace("XyZ", "In");
        let m = mail_of(&[
            (&attached("text/plain", "notes.txt"), base64(b"alpha\n")),
            (&attached("application/octet-stream", "../../etc/passwd"), base64(b"root\n")),
            (&attached("text/plain", "notes.txt"), base64(b"again\n")),
            (&attached("application/zip", "C:\\\\x\\\\bundle!.zip"), base64(&inner)),
            (
                "Content-Type: application/vnd.openxmlformats-officedocument.wordprocessingml.document; name*=utf-8''l%C3%A9tter.docx\r\nContent-Transfer-Encoding: base64",
                base64(&docx),
            ),
            ("Content-Type: image/png\r\nContent-Transfer-Encoding: base64", base64(b"\x89PNG")),
            ("Content-Type: message/rfc822\r\nContent-Disposition: attachment", forwarded.clone()),
            ("Content-Type: text/html\r\n", "<p>the body as html</p>".into()),
        ]);
        assert_eq!(archive_kind(&m), Some(ArchiveKind::Mail));
        let (got, e) = all(&m, &Limits::default());
        assert_eq!(
            names(&got),
            [
                "notes.txt",
                "passwd",
                "notes~2.txt",
                "bundle!!.zip",
                "bundle!!.zip!/c.txt",
                "létter.docx",
                "attachment-6",
                "attachment-7",
                "attachment-7!/inner.txt",
            ]
        );
        assert_eq!(got[0].1, b"alpha\n");
        assert_eq!(got[1].1, b"root\n");
        assert_eq!(got[2].1, b"again\n");
        assert_eq!(got[5].1, docx);
        assert_eq!(got[7].1, forwarded.as_bytes());
        assert_eq!((e.members, e.left_out, e.note), (9, 0, None));
        // A message without attachments: an archive without members.
        let plain = mail_of(&[]);
        assert_eq!(all(&plain, &Limits::default()).0.len(), 0);
        // Over the size limit: left out with a note, the rest kept.
        let small = Limits {
            max_bytes: 5,
            ..Limits::default()
        };
        let (got, e) = all(
            &mail_of(&[
                (&attached("text/plain", "big.txt"), base64(b"0123456789")),
                (&attached("text/plain", "s.txt"), base64(b"s\n")),
            ]),
            &small,
        );
        assert_eq!(names(&got), ["s.txt"]);
        assert_eq!((e.left_out, e.reason), (1, Some(LeftOut::Limit)));
        assert_eq!(
            e.note.unwrap(),
            "member big.txt is 10 bytes, more than the size limit of 5"
        );
        // The MIME walk's part count stops the message with a note.
        let few = Limits {
            max_members: 3,
            ..Limits::default()
        };
        let parts: Vec<_> = (0..5)
            .map(|i| (attached("text/plain", &format!("{i}.txt")), base64(b"x")))
            .collect();
        let refs: Vec<(&str, String)> =
            parts.iter().map(|(h, b)| (h.as_str(), b.clone())).collect();
        let (got, e) = all(&mail_of(&refs), &few);
        assert_eq!(names(&got), ["0.txt"]);
        assert_eq!(e.reason, Some(LeftOut::Limit));
        assert_eq!(e.note.unwrap(), "more than 3 MIME parts");
    }

    #[test]
    fn many_attachments_of_one_name_are_numbered_once_each() {
        let mut names = Names::default();
        let got: Vec<String> = (0..5).map(|_| names.unique("a.txt".into())).collect();
        assert_eq!(got, ["a.txt", "a~2.txt", "a~3.txt", "a~4.txt", "a~5.txt"]);
        assert_eq!(names.unique("a~6.txt".into()), "a~6.txt");
        assert_eq!(names.unique("a.txt".into()), "a~7.txt");
        assert_eq!(names.unique(".profile".into()), ".profile");
        assert_eq!(names.unique(".profile".into()), ".profile~2");
        assert_eq!(
            super::super::mail::member_name(Some(".."), 4),
            "attachment-4"
        );
        assert_eq!(
            super::super::mail::member_name(Some("a/"), 1),
            "attachment-1"
        );
        assert_eq!(
            super::super::mail::member_name(Some("x\ny.txt"), 1),
            "x_y.txt"
        );
        assert_eq!(
            super::super::mail::member_name(Some(&"é".repeat(200)), 1).len(),
            254
        );
        let long = super::super::mail::member_name(Some(&format!("{}.pdf", "é".repeat(200))), 1);
        assert_eq!((long.len(), &long[long.len() - 6..]), (254, "é.pdf"));
        // A name all extension after its dot keeps none.
        let dots = super::super::mail::member_name(Some(&format!("a.{}", "b".repeat(300))), 1);
        assert_eq!(dots.len(), 255);
    }

    #[test]
    fn mutated_archives_never_panic_or_grow() {
        let inner = zip_of(&[("c.txt", b"gamma gamma gamma\n")]);
        let tar = tar_of(&[
            (b"a.txt", b"alpha\n", b'0'),
            (b"in.zip", &inner, b'0'),
            (b"PaxHeaders/x", b"16 path=p/q.txt\n", b'x'),
            (b"q", &[b'q'; 900], b'0'),
        ]);
        let fixtures = [
            zip_of(&[
                ("a.txt", b"alpha\n"),
                ("in.zip", &inner),
                ("z", &[0u8; 5000]),
            ]),
            tar.clone(),
            gzip(&tar),
            mail_of(&[
                (&attached("text/plain", "a.txt"), base64(b"alpha\n")),
                (&attached("application/zip", "in.zip"), base64(&inner)),
                ("Content-Type: message/rfc822", "Content-Type: multipart/mixed; boundary=b\r\nFrom: x\r\nDate: y\r\n\r\n--b\r\nContent-Type: image/png\r\n\r\nPNG\r\n--b--\r\n".into()),
            ]),
        ];
        let limits = Limits {
            max_bytes: 1 << 16,
            max_input: 1 << 17,
            ..Limits::default()
        };
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        let (mut cases, mut notes) = (0, 0);
        let start = std::time::Instant::now();
        for f in &fixtures {
            for round in 0..300 {
                let mut d = f.clone();
                match round % 4 {
                    0 => {
                        for _ in 0..1 + next(8) {
                            let i = next(d.len());
                            d[i] ^= 1 << next(8);
                        }
                    }
                    1 => d.truncate(next(d.len())),
                    2 => {
                        let (a, n) = (next(d.len()), next(256));
                        let end = (a + n).min(d.len());
                        d[a..end].fill(0);
                    }
                    _ => {
                        let (a, n) = (next(d.len()), next(512));
                        let slice = d[a..(a + n).min(d.len())].to_vec();
                        d.splice(a..a, slice);
                    }
                }
                let Some(kind) = archive_kind(&d) else {
                    continue;
                };
                let mut bytes = 0u64;
                let e = members(&d, kind, &limits, &mut |m| {
                    assert!(m.bytes.len() as u64 <= limits.max_bytes);
                    bytes += m.bytes.len() as u64;
                });
                assert!(bytes <= limits.max_input + limits.max_bytes);
                assert!(e.members <= limits.max_members);
                cases += 1;
                notes += e.note.is_some() as usize;
            }
        }
        assert!(cases > 500 && notes > 100, "{cases} cases, {notes} notes");
        assert!(start.elapsed().as_secs() < 20);
    }
}
