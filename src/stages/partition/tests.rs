//! Tests of the partition stage: what the grouper keeps and links, on
//! small record streams.

use super::*;

/// Collects what a [`Grouper`] keeps: text, links, and how often the
/// text was allowed out.
#[derive(Default)]
struct Collect {
    text: Vec<u8>,
    links: Vec<(u32, u32)>,
}

impl Keep for Collect {
    fn text(&mut self) -> &mut Vec<u8> {
        &mut self.text
    }
    fn spill(&mut self) -> Result<()> {
        Ok(())
    }
    fn link(&mut self, a: u32, b: u32) -> Result<()> {
        self.links.push((a, b));
        Ok(())
    }
}

/// Kept records as (hash, file), and links.
type Kept = (Vec<(u128, u32)>, Vec<(u32, u32)>);

/// Feed groups of (hash, files) with length 100; the kept records
/// parsed back from the text, and the links.
fn feed(g: &mut Grouper, groups: &[(u128, &[u32])]) -> Kept {
    let mut c = Collect::default();
    for &(h, files) in groups {
        for &f in files {
            let k = ChunkKey {
                hi: (h >> 64) as u64,
                lo: h as u64,
                file: f,
                len: 100,
            };
            let mut line = [0u8; 64];
            let n = format_chunk_line(&k, &mut line);
            g.add(&k, k.record().mix(), &line[..n - 1], &mut c).unwrap();
        }
    }
    g.finish(&mut c).unwrap();
    let kept = c
        .text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let k = parse_chunk_line(l).unwrap();
            (k.hash(), k.file)
        })
        .collect();
    (kept, c.links)
}

#[test]
fn groups_limits_and_unions() {
    let mut g = Grouper::new(3, 64);
    let (kept, links) = feed(
        &mut g,
        &[
            (1, &[0, 1]),          // kept: 0-1
            (2, &[2]),             // degree 1: dropped silently
            (3, &[3, 3, 4]),       // kept, degree 2 with a repeated chunk
            (4, &[0, 1, 2, 3, 5]), // degree 5 > 3: dropped and reported
            (5, &[2, 2, 2]),       // degree 1 although 3 records
        ],
    );
    assert_eq!(kept, [(1, 0), (1, 1), (3, 3), (3, 3), (3, 4)]);
    assert_eq!(g.singleton_chunks, 2);
    assert_eq!((g.dropped_chunks, g.dropped_records), (1, 5));
    assert_eq!(
        g.top_dropped(),
        [Dropped {
            hash: 4,
            degree: 5,
            len: 100,
            example: 0
        }]
    );
    assert_eq!(g.kept.count, 5);
    assert_eq!(links, [(0, 1), (3, 4)]);
    let mut u = Unions::new(6);
    for (a, b) in links {
        u.queue(a, b);
    }
    let c = u.into_components();
    let labels: Vec<u32> = (0..6).map(|i| c.label(i)).collect();
    assert_eq!(labels, [0, 0, 2, 3, 3, 5]);
    assert_eq!(c.multi_counts(), (2, 4));
}

/// Long kept groups are formatted again from their keys: the same text,
/// links and digest as when copied, and a dropped group leaves no text.
#[test]
fn long_groups_are_formatted_the_same() {
    let files: Vec<u32> = (0..40).flat_map(|f| [f, f]).collect();
    let groups: &[(u128, &[u32])] = &[(7, &files), (8, &[1, 2, 3]), (9, &[5])];
    let mut copied = Grouper::new(50, 64);
    let mut formatted = Grouper::new(50, 64).with_text_max(5);
    let a = feed(&mut copied, groups);
    let b = feed(&mut formatted, groups);
    assert_eq!(a, b);
    assert_eq!(a.0.len(), 83);
    assert_eq!(copied.kept, formatted.kept);
    let mut low = Grouper::new(39, 64).with_text_max(5);
    let (kept, links) = feed(&mut low, groups);
    assert_eq!(kept, [(8, 1), (8, 2), (8, 3)]);
    assert_eq!(links, [(1, 2), (1, 3)]);
    assert_eq!((low.dropped_chunks, low.dropped_records), (1, 80));
}

#[test]
fn degree_at_limit_is_kept() {
    let mut g = Grouper::new(2, 64);
    let (kept, _) = feed(&mut g, &[(9, &[1, 2]), (10, &[0, 1, 2])]);
    assert_eq!(kept.len(), 2);
    assert_eq!(g.dropped_chunks, 1);
}

#[test]
fn top_keeps_highest_degrees() {
    let mut g = Grouper::new(1, 64);
    for h in 0..30u128 {
        let files: Vec<u32> = (0..(h as u32 % 25) + 2).collect();
        feed(&mut g, &[(h, &files)]);
    }
    let top = g.top_dropped();
    assert_eq!(top.len(), TOP_DROPPED);
    assert_eq!(top[0].degree, 26);
    assert!(top.windows(2).all(|w| w[0].degree >= w[1].degree));
}

#[test]
fn limit_resolution() {
    let half = |floor| Limit::Fraction {
        fraction: 0.5,
        floor,
    };
    assert_eq!(half(0).resolve(7), 3);
    // The floor: no folder of fewer than 2 × floor files is pruned.
    assert_eq!(Limit::DEFAULT.resolve(2), DEFAULT_DEGREE_FLOOR);
    assert_eq!(Limit::DEFAULT.resolve(1999), DEFAULT_DEGREE_FLOOR);
    assert_eq!(Limit::DEFAULT.resolve(100_000), 50_000);
    assert_eq!(Limit::Absolute(9).resolve(7), 9);
}
