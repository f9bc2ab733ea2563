//! The line formats that flow between stages (docs/formats.md is the
//! reference): parse, write and escape, in one place.
//!
//! Every intermediate file is text, one record per line, fields separated by
//! a tab, so that `grep`, `awk` and `LC_ALL=C sort` work on it. Each file
//! starts with a header line `#fsim <kind> v1\tkey=value...` that records the
//! parameters of the run, and ends with a trailer `#end <kind>\tkey=value...`
//! that holds counts and an order-independent digest, so a truncated or mixed
//! input is refused with the file name and line instead of silently giving a
//! smaller answer. Both start with `#`, which sorts before every hex digit, so
//! `LC_ALL=C sort` keeps them at the top of a sorted chunk file.
//!
//! Hashes are 32 lowercase hex digits and file ids 10 zero-padded decimal
//! digits: fixed widths make byte order equal numeric order, which is what
//! lets `LC_ALL=C sort` replace `fsim-sort` byte for byte.

pub mod bins;
pub mod changed;
pub mod chunks;
pub mod codec;
pub mod collections;
pub mod escape;
pub mod files;
pub mod glob;
pub mod headers;
pub mod join;
pub mod lines;
pub mod linesets;
pub mod numbers;
pub mod pairs;
pub mod shards;
pub mod templates;
pub mod views;

pub use chunks::*;
pub use codec::{Codec, GZIP_MAGIC, ZSTD_MAGIC};
pub use escape::*;
pub use files::*;
pub use lines::*;
pub use numbers::*;
pub use views::*;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escape_known_answers() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain/path.txt", "plain/path.txt"),
            (b"tab\there", "tab\\there"),
            (b"new\nline", "new\\nline"),
            (b"back\\slash", "back\\\\slash"),
            (b"cr\r", "cr\\r"),
            (b"bell\x07", "bell\\x07"),
            (b"bad\xffutf8", "bad\\xffutf8"),
            ("caf\u{e9}".as_bytes(), "caf\u{e9}"),
            (b"<script>=-x", "<script>=-x"),
        ];
        for (raw, esc) in cases {
            assert_eq!(escape_path_string(raw), *esc);
            assert_eq!(unescape_path(esc.as_bytes()).unwrap(), *raw);
        }
    }

    #[test]
    fn unescape_errors() {
        assert!(unescape_path(b"a\\q").is_err());
        assert!(unescape_path(b"a\\x0").is_err());
        assert!(unescape_path(b"a\\x00").is_err());
        assert!(unescape_path(b"a\tb").is_err());
        assert!(unescape_path(b"").is_err());
    }

    /// The vector hex parser against the portable one, on digests, on
    /// every single-byte corruption of a digest, and on its edge values.
    #[test]
    fn hex128_vector_matches_scalar() {
        let mut rng = 0x1234_5678_9abc_def0u64;
        for round in 0..2000u32 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let v = mix128(rng as u128 ^ ((round as u128) << 64));
            let v = match round {
                0 => 0,
                1 => u128::MAX,
                _ => v,
            };
            let text = hex128(v);
            let mut s: [u8; HASH_WIDTH] = text.as_bytes().try_into().unwrap();
            assert_eq!(parse_hex128(&s), Some(v));
            assert_eq!(parse_hex128_scalar(&s), Some(v));
            let at = (rng >> 32) as usize % HASH_WIDTH;
            s[at] = (rng >> 40) as u8;
            assert_eq!(parse_hex128(&s), parse_hex128_scalar(&s), "{:?}", s);
        }
        for c in 0..=255u8 {
            let mut s = [b'0'; HASH_WIDTH];
            s[HASH_WIDTH - 1] = c;
            let want = match c {
                b'0'..=b'9' => Some((c - b'0') as u128),
                b'a'..=b'f' => Some((c - b'a' + 10) as u128),
                _ => None,
            };
            assert_eq!(parse_hex128(&s), want, "byte {c}");
        }
        assert_eq!(parse_hex128(b"0123"), None);
    }

    #[test]
    fn parse_id_known_answers() {
        assert_eq!(parse_id(b"0000000000"), Some(0));
        assert_eq!(parse_id(b"0000000042"), Some(42));
        assert_eq!(parse_id(b"1234567890"), Some(1_234_567_890));
        assert_eq!(parse_id(b"4294967295"), Some(u32::MAX));
        assert_eq!(parse_id(b"4294967296"), None);
        assert_eq!(parse_id(b"9999999999"), None);
        assert_eq!(parse_id(b"000000004"), None);
        assert_eq!(parse_id(b"00000000042"), None);
        for at in 0..ID_WIDTH {
            for c in [b'/', b':', b' ', b'a', 0x80, 0xb0, 0x3a, 0x2f] {
                let mut s = *b"1234567890";
                s[at] = c;
                assert_eq!(parse_id(&s), None, "{:?}", s);
            }
        }
    }

    proptest! {
        #[test]
        fn escape_round_trips(path in proptest::collection::vec(1u8..=255, 1..64)) {
            let esc = escape_path_string(&path);
            prop_assert!(!esc.contains('\t') && !esc.contains('\n'));
            prop_assert_eq!(unescape_path(esc.as_bytes()).unwrap(), path);
        }

        #[test]
        fn chunk_record_round_trips(hash: u128, file: u32, len: u32) {
            let r = ChunkRecord { hash, file, len };
            let mut v = Vec::new();
            r.write(&mut v);
            prop_assert_eq!(v.last(), Some(&b'\n'));
            prop_assert_eq!(ChunkRecord::parse(&v[..v.len() - 1]), Some(r));
        }

        #[test]
        fn parse_id_matches_decimal(id: u32, small in 0u32..100_000) {
            for v in [id, small] {
                let mut s = Vec::new();
                write_id(v, &mut s);
                prop_assert_eq!(parse_id(&s), Some(v));
            }
        }

        #[test]
        fn parsers_never_panic(line in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = ChunkRecord::parse(&line);
            let _ = FileEntry::parse(&line);
            let _ = classify_line(&line);
            let _ = unescape_path(&line);
        }

        #[test]
        fn byte_order_is_numeric_order(a: (u128, u32), b: (u128, u32)) {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            ChunkRecord { hash: a.0, file: a.1, len: 7 }.write(&mut x);
            ChunkRecord { hash: b.0, file: b.1, len: 7 }.write(&mut y);
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
        }
    }

    #[test]
    fn file_entry_round_trip() {
        let e = FileEntry {
            id: 42,
            size: 1234,
            mtime_s: -5,
            mtime_ns: 7,
            content: 0xd41d8cd98f00b204e9800998ecf8427e,
            ftype: FileType::Text,
            view: FileView::raw(1234),
            path: b"dir/a\tb\nc\xff".to_vec(),
        };
        let mut v = Vec::new();
        e.write(&mut v);
        assert_eq!(
            String::from_utf8(v.clone()).unwrap(),
            "0000000042\t1234\t-5.000000007\td41d8cd98f00b204e9800998ecf8427e\ttext\traw\t1234\t-\tdir/a\\tb\\nc\\xff\n"
        );
        assert_eq!(FileEntry::parse(&v[..v.len() - 1]).unwrap(), e);
        // A v2 record (no view, no raw size) reads as the raw view.
        let v2 = b"0000000042\t1234\t-5.000000007\td41d8cd98f00b204e9800998ecf8427e\ttext\tdir/a\\tb\\nc\\xff";
        assert_eq!(FileEntry::parse(v2).unwrap(), e);
        let docx = FileEntry {
            view: FileView {
                kind: ViewKind::Docx,
                raw_size: 40_000,
                unreadable: None,
                hash: Some(0x0123456789abcdef0123456789abcdef),
                archive: None,
                left_out: None,
                link: None,
                unread: None,
            },
            ..e
        };
        let mut v = Vec::new();
        docx.write(&mut v);
        assert!(v.ends_with(
            b"\ttext\tdocx\t40000\t0123456789abcdef0123456789abcdef\tdir/a\\tb\\nc\\xff\n"
        ));
        assert_eq!(FileEntry::parse(&v[..v.len() - 1]).unwrap(), docx);
        // A v3 record (no view hash): a content view without one.
        let v3 = b"0000000042\t1234\t-5.000000007\td41d8cd98f00b204e9800998ecf8427e\ttext\tdocx\t40000\tdir/a\\tb\\nc\\xff";
        let mut no_hash = docx.clone();
        no_hash.view.hash = None;
        assert_eq!(FileEntry::parse(v3).unwrap(), no_hash);
        let bad = String::from_utf8(v).unwrap().replace("docx", "dok");
        assert_eq!(
            FileEntry::parse(&bad.as_bytes()[..bad.len() - 1]).unwrap_err(),
            "expected a view (raw, docx, gzip, raw/docx, docx!5, raw~broken, raw^denied, raw@2049:12, ...) in field 6"
        );
        // A file with several names: its identity after an `@`.
        let mut linked = docx.clone();
        linked.view.link = Some((2049, 1234567));
        let mut v = Vec::new();
        linked.write(&mut v);
        assert!(v.ends_with(
            b"\tdocx@2049:1234567\t40000\t0123456789abcdef0123456789abcdef\tdir/a\\tb\\nc\\xff\n"
        ));
        assert_eq!(FileEntry::parse(&v[..v.len() - 1]).unwrap(), linked);
        // A member of an archive: the archive path's length after a `!`.
        let mut member = docx.clone();
        member.view.archive = Some(5);
        member.view.unreadable = Some(ViewKind::Pdf);
        member.view.kind = ViewKind::Raw;
        let mut v = Vec::new();
        member.write(&mut v);
        assert!(v.ends_with(
            b"\ttext\traw/pdf!5\t40000\t0123456789abcdef0123456789abcdef\tdir/a\\tb\\nc\\xff\n"
        ));
        assert_eq!(FileEntry::parse(&v[..v.len() - 1]).unwrap(), member);
        // A nested archive whose members were not all listed: its reason
        // between the view and the archive path's length.
        let mut nested = member.clone();
        nested.view.unreadable = None;
        nested.view.left_out = Some(LeftOut::Deep);
        let mut v = Vec::new();
        nested.write(&mut v);
        assert!(v.ends_with(
            b"\ttext\traw~deep!5\t40000\t0123456789abcdef0123456789abcdef\tdir/a\\tb\\nc\\xff\n"
        ));
        assert_eq!(FileEntry::parse(&v[..v.len() - 1]).unwrap(), nested);
        for l in LeftOut::ALL {
            assert_eq!(LeftOut::from_name(l.name()), Some(l));
        }
        let bad = String::from_utf8(v).unwrap().replace("~deep", "~deeper");
        assert!(FileEntry::parse(&bad.as_bytes()[..bad.len() - 1]).is_err());
    }

    #[test]
    fn headers_and_trailers() {
        let p = Params::new().with("method", "tttd").with("avg", 1000);
        let mut v = Vec::new();
        write_header(Kind::Chunks, &p, &mut v);
        assert_eq!(v, b"#fsim chunks v1\tmethod=tttd\tavg=1000\n");
        assert_eq!(
            classify_line(&v[..v.len() - 1]).unwrap(),
            Line::Header(Kind::Chunks, p.clone())
        );
        let mut check = InputCheck::new(Kind::Chunks, "records");
        check.header(Kind::Chunks, p.clone()).unwrap();
        let other = Params::new().with("method", "tttd").with("avg", 100);
        let err = check.header(Kind::Chunks, other).unwrap_err();
        assert_eq!(err, "records from runs with different parameters are mixed: avg=100 here but avg=1000 before");
        assert!(check
            .header(Kind::Pairs, p)
            .unwrap_err()
            .contains("expected a chunks file"));
    }

    #[test]
    fn digest_is_order_independent() {
        let rs = [
            ChunkRecord {
                hash: 1,
                file: 2,
                len: 3,
            },
            ChunkRecord {
                hash: 9,
                file: 0,
                len: 1,
            },
        ];
        let (mut a, mut b) = (Digest::default(), Digest::default());
        a.add(&rs[0]);
        a.add(&rs[1]);
        b.add(&rs[1]);
        b.add(&rs[0]);
        assert_eq!(a, b);
        let mut c = Digest::default();
        c.add(&rs[0]);
        c.add(&ChunkRecord {
            hash: 9,
            file: 1,
            len: 1,
        });
        assert_ne!(a, c);
    }

    #[test]
    fn chunk_lines_are_chunk_records() {
        let mut x = 0x1234_5678_9abc_def0_u128;
        for (file, len) in [
            (0u32, 0u32),
            (1, 9),
            (7, 10),
            (99, 99),
            (100, 100),
            (12345, 999),
            (u32::MAX, 1000),
            (42, 65_535),
            (3, u32::MAX),
        ] {
            for hash in [
                0u128,
                u128::MAX,
                x,
                !x,
                0x0123_4567_89ab_cdef_fedc_ba98_7654_3210,
            ] {
                let mut want = Vec::new();
                ChunkRecord { hash, file, len }.write(&mut want);
                let mut got = vec![b'#'];
                ChunkLines::new(file).write(hash, len, &mut got);
                assert_eq!(got[1..], want[..], "{hash:x} {file} {len}");
                x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ (x >> 29);
            }
        }
        // Hex digits against the formatter of std.
        for _ in 0..1000 {
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ (x >> 29);
            assert_eq!(hex128(x), format!("{x:032x}"));
        }
    }

    #[test]
    fn classify_types() {
        assert_eq!(FileType::classify(b"", 0), FileType::Empty);
        assert_eq!(FileType::classify(b"hello world\n", 12), FileType::Text);
        assert_eq!(FileType::classify(b"%PDF-1.4 ...", 100), FileType::Pdf);
        assert_eq!(
            FileType::classify(b"\x1f\x8b\x08\x00", 100),
            FileType::Compressed
        );
        assert_eq!(FileType::classify(b"ab\x00cd", 5), FileType::Binary);
        let model = |h: &[u8]| {
            h.iter()
                .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b))
                .count()
        };
        // Past 255 rounds of 32 bytes (the counters' flush) and odd tails.
        for len in [0, 1, 31, 32, 33, 3000, 8160, 8161, 8192, 20_000] {
            let all: Vec<u8> = (0..=255u8).cycle().take(len).collect();
            assert_eq!(count_suspicious(&all), model(&all), "{len}");
            let ctl: Vec<u8> = (0..32u8).cycle().take(len).collect();
            assert_eq!(count_suspicious(&ctl), model(&ctl), "{len}");
        }
    }
}
