//! Tests of the chunk stage's reading: records spilled and replayed in
//! order, a stream chunked as a slice is, content hashes deferred and
//! streamed alike, an empty stream.

use super::*;
use crate::chunking::chunker::Cut;
use crate::chunking::chunker::Method;
use crate::chunking::reader::{
    chunk_stream, chunk_stream_defer, chunk_stream_with, content_of, Spill,
};
use crate::chunking::stream::Piece;
use crate::formats::FileType;
use md5::{Digest as _, Md5};
use std::io::{self, Read};

#[test]
fn spilled_pieces_come_back_in_order_one_or_many_threads() {
    let data = crate::chunking::chunker::pseudo_text(3 << 20, 23);
    let c = Chunker::new(Method::Tttd, 100).unwrap();
    let mut buf = read_buffer(&c);
    let mut want = Vec::new();
    let wi = chunk_stream(&mut &data[..], &c, &mut buf, &mut want).unwrap();
    for hashers in [1, 2] {
        let mut spilled = None;
        let mut offload = |p: &mut Vec<Piece>| Spill::offload(&mut spilled, p, 1000);
        let mut rest = Vec::new();
        let gi = if hashers == 1 {
            chunk_stream_with(&mut &data[..], &c, &mut buf, &mut rest, &mut offload)
        } else {
            crate::chunking::parhash::chunk_stream_par(
                &mut &data[..],
                &c,
                2,
                &mut rest,
                &mut offload,
            )
        }
        .unwrap();
        assert_eq!(gi, wi);
        let spill = spilled.expect("spilled");
        assert!(rest.len() < 1000 + 20_000, "{}", rest.len());
        assert!(spill.count > 20_000);
        let mut got = Vec::new();
        spill
            .replay(|p| {
                got.push(p);
                Ok(())
            })
            .unwrap();
        got.extend(rest);
        assert_eq!(got, want, "{hashers} hashers");
    }
}

#[test]
fn stream_matches_slice_chunking() {
    let data = crate::chunking::chunker::pseudo_text(3 << 20, 17);
    let c = Chunker::new(Method::Tttd, 1000).unwrap();
    let mut buf = read_buffer(&c);
    let mut pieces = Vec::new();
    // A reader that returns odd-sized pieces.
    struct Odd<'a>(&'a [u8], usize);
    impl Read for Odd<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.1 = (self.1 * 7 + 3) % 5000 + 1;
            let n = self.1.min(out.len()).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let info = chunk_stream(&mut Odd(&data, 1), &c, &mut buf, &mut pieces).unwrap();
    let expect: Vec<Piece> = c
        .chunks(&data)
        .map(|ch| {
            (
                formats::digest_to_u128(&Md5::digest(&data[ch.offset..ch.offset + ch.len])),
                ch.len as u32,
            )
        })
        .collect();
    assert_eq!(pieces, expect);
    assert_eq!(info.size, data.len() as u64);
    assert_eq!(info.ftype, FileType::Text);
    let mut all = Md5::new();
    for (h, _) in &expect {
        all.update(h.to_be_bytes());
    }
    assert_eq!(info.content, formats::digest_to_u128(&all.finalize()));
}

#[test]
fn deferred_content_hashes_are_the_streamed_ones() {
    let c = Chunker::new(Method::Tttd, 100).unwrap();
    let mut buf = read_buffer(&c);
    let mut results = Vec::new();
    let mut want = Vec::new();
    // Empty, one chunk, a few, many; the last is larger than the
    // buffer, so it is hashed while read, not deferred.
    for (i, len) in [0usize, 10, 300, 5000, 20_000, 3 << 20]
        .into_iter()
        .enumerate()
    {
        let data = crate::chunking::chunker::pseudo_text(len, i as u64);
        let mut pieces = Vec::new();
        let info = chunk_stream(&mut &data[..], &c, &mut buf, &mut pieces).unwrap();
        want.push(info);
        let mut dpieces = Vec::new();
        let (dinfo, pending) = chunk_stream_defer(
            &mut &data[..],
            &c,
            &mut buf,
            &mut dpieces,
            &mut |_| Ok(()),
            true,
        )
        .unwrap();
        assert_eq!(pending, len <= buf.len(), "{len}");
        assert_eq!(dpieces, pieces);
        if pending {
            assert_eq!(content_of(&pieces), info.content);
        }
        results.push(Body::File(FileResult {
            path: PathBuf::from(format!("f{i}")),
            info: dinfo,
            mtime_s: 0,
            mtime_ns: 0,
            pieces: dpieces,
            spilled: None,
            pos: 0,
            reused: None,
            content_pending: pending,
            view: crate::formats::FileView::raw(dinfo.size),
            note: None,
            members: None,
        }));
        results.push(Body::Special);
    }
    finish_contents(&mut results, &mut Vec::new());
    let got: Vec<StreamInfo> = results
        .iter()
        .filter_map(|b| match b {
            Body::File(f) => {
                assert!(!f.content_pending);
                Some(f.info)
            }
            _ => None,
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn empty_stream() {
    let c = Chunker::new(Method::Tttd, 1000).unwrap();
    let mut buf = read_buffer(&c);
    let mut pieces = Vec::new();
    let info = chunk_stream(&mut io::empty(), &c, &mut buf, &mut pieces).unwrap();
    assert!(pieces.is_empty());
    assert_eq!(info.ftype, FileType::Empty);
    assert_eq!(
        formats::hex128(info.content),
        "d41d8cd98f00b204e9800998ecf8427e"
    );
}
