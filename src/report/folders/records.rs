//! The fixed-size records the folder pairs sort: a file's credit in a
//! folder pair ([`Credit`]) and its partner in a listed pair ([`Detail`]);
//! the small table that combines a file's records before they are sorted
//! ([`Combiner`]) and the merge of the workers' sorted streams
//! ([`Merged`]).

use crate::error::Result;
use crate::io::hashing::prefetch;
use crate::io::sorter::{FixedRecord, Sorted};

/// Slots of the [`Combiner`] at most (1.5 MiB): enough to hold a file's
/// credit in a pair from one of its partners to the next (a file's links
/// come together in the pairs' order), small next to the sorter's buffer.
pub(super) const COMBINED: u64 = 64 << 10;

/// A file's partner in the other folder of a pair: sorted by pair, then
/// file, the last credit of a file is its best.
///
/// Packed into three words whose derived order is that of (lower folder,
/// higher folder, file, bytes, identical): the sort, most of the folder
/// pairs' cost, compares three integers instead of five fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Credit {
    /// The pair's folders (lower id first): `da << 32 | db`.
    pub(super) pair: u64,
    /// `file << 32 | bytes >> 32`.
    pub(super) file_hi: u64,
    /// `(bytes & 0xffff_ffff) << 1 | identical`.
    pub(super) lo: u64,
}

impl Credit {
    pub(super) fn new(da: u32, db: u32, file: u32, bytes: u64, identical: bool) -> Credit {
        Credit {
            pair: u64::from(da) << 32 | u64::from(db),
            file_hi: u64::from(file) << 32 | bytes >> 32,
            lo: (bytes & 0xffff_ffff) << 1 | u64::from(identical),
        }
    }
    pub(super) fn da(&self) -> u32 {
        (self.pair >> 32) as u32
    }
    pub(super) fn db(&self) -> u32 {
        self.pair as u32
    }
    pub(super) fn file(&self) -> u32 {
        (self.file_hi >> 32) as u32
    }
    pub(super) fn bytes(&self) -> u64 {
        (self.file_hi & 0xffff_ffff) << 32 | self.lo >> 1
    }
    pub(super) fn identical(&self) -> bool {
        self.lo & 1 == 1
    }
    /// (pair, file): the credits of one file in one pair, of which the
    /// greatest is its best.
    pub(super) fn group(&self) -> (u64, u32) {
        (self.pair, self.file())
    }
}

impl FixedRecord for Credit {
    const SIZE: usize = 21;
    fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.pair.to_be_bytes());
        out[8..12].copy_from_slice(&self.file().to_be_bytes());
        out[12..20].copy_from_slice(&self.bytes().to_be_bytes());
        out[20] = self.identical() as u8;
    }
    fn decode(b: &[u8]) -> Self {
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Credit::new(
            u32_at(0),
            u32_at(4),
            u32_at(8),
            u64::from_be_bytes(b[12..20].try_into().expect("8 bytes")),
            b[20] != 0,
        )
    }
}

/// A record a [`Combiner`] holds: of the records of one group, the
/// greatest is the one kept (the last of the group once sorted).
pub(super) trait Grouped: Copy + Ord {
    /// A free slot: no record is this.
    const FREE: Self;
    fn same_group(&self, other: &Self) -> bool;
    /// A hash of the group.
    fn group_hash(&self) -> u64;
}

impl Grouped for Credit {
    /// No pair has the root's id.
    const FREE: Credit = Credit {
        pair: u64::MAX,
        file_hi: 0,
        lo: 0,
    };
    fn same_group(&self, other: &Self) -> bool {
        self.group() == other.group()
    }
    fn group_hash(&self) -> u64 {
        (self.pair.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(self.file()))
            .wrapping_mul(0xD6E8_FEB8_6659_FD93)
    }
}

impl Grouped for Detail {
    /// No listed pair has this index.
    const FREE: Detail = Detail {
        k: u32::MAX,
        file: 0,
        bytes: 0,
        identical: false,
        partner: 0,
    };
    fn same_group(&self, other: &Self) -> bool {
        (self.k, self.file) == (other.k, other.file)
    }
    fn group_hash(&self) -> u64 {
        (u64::from(self.k) << 32 | u64::from(self.file)).wrapping_mul(0xD6E8_FEB8_6659_FD93)
    }
}

/// The latest record of a few groups ((pair, file) for a [`Credit`],
/// (listed pair, file) for a [`Detail`]), direct-mapped by a hash of the
/// group: a file credited again in the same pair (by each of its partners
/// in the other folder, at the upper heights: a locale file linked to
/// every locale of the other release) is combined here, keeping the
/// greatest as [`super::Folders::figure`] keeps the last of the sorted records,
/// instead of being sorted and spilled once per partner.
///
/// The slots are 1.5 MiB, past the core's cache, and a put's slot was a
/// miss most of the time (a third of the folder pairs' crediting on the
/// releases tree): each put prefetches its slot and is applied
/// [`AHEAD`] puts later, in the same order, so the records that come out
/// are the same, in the same order.
pub(super) struct Combiner<T: Grouped> {
    slots: Vec<T>,
    shift: u32,
    /// Puts not yet applied (slot, record), oldest first.
    pending: std::collections::VecDeque<(usize, T)>,
}

/// How many puts a put's slot is prefetched ahead of its use.
const AHEAD: usize = 16;

impl<T: Grouped> Combiner<T> {
    /// At most `bytes` of slots, and [`COMBINED`] (a power of two of
    /// them, 256 at least).
    pub(super) fn new(bytes: u64) -> Combiner<T> {
        let want = (bytes / std::mem::size_of::<T>() as u64).clamp(256, COMBINED);
        let bits = 63 - want.leading_zeros();
        Combiner {
            slots: vec![T::FREE; 1 << bits],
            shift: 64 - bits,
            pending: std::collections::VecDeque::with_capacity(AHEAD + 1),
        }
    }

    pub(super) fn bytes(&self) -> u64 {
        (self.slots.len() * std::mem::size_of::<T>()) as u64
    }

    /// Combine `c` into its slot (once [`AHEAD`] more puts came); the
    /// record that the oldest pending put displaces, if any.
    #[inline]
    pub(super) fn put(&mut self, c: T) -> Option<T> {
        let at = (c.group_hash() >> self.shift) as usize;
        prefetch(&self.slots[at]);
        self.pending.push_back((at, c));
        if self.pending.len() <= AHEAD {
            return None;
        }
        let (at, c) = self.pending.pop_front()?;
        self.apply(at, c)
    }

    #[inline]
    fn apply(&mut self, at: usize, c: T) -> Option<T> {
        let slot = &mut self.slots[at];
        if slot.same_group(&c) {
            *slot = (*slot).max(c);
            return None;
        }
        let old = std::mem::replace(slot, c);
        (old != T::FREE).then_some(old)
    }

    /// The records the pending puts displace, then the records held; the
    /// slots freed.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        let mut displaced = Vec::new();
        while let Some((at, c)) = self.pending.pop_front() {
            displaced.extend(self.apply(at, c));
        }
        displaced.into_iter().chain(
            self.slots
                .iter_mut()
                .map(|s| std::mem::replace(s, T::FREE))
                .filter(|c| *c != T::FREE),
        )
    }
}

/// A file's partner in the other folder of a listed pair ([`super::DETAILED`]):
/// sorted by pair, then file, the last of a file is its best (as
/// [`Credit`]'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Detail {
    /// The pair's index in the report.
    pub(super) k: u32,
    pub(super) file: u32,
    pub(super) bytes: u64,
    pub(super) identical: bool,
    pub(super) partner: u32,
}

impl FixedRecord for Detail {
    const SIZE: usize = 21;
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.k.to_be_bytes());
        out[4..8].copy_from_slice(&self.file.to_be_bytes());
        out[8..16].copy_from_slice(&self.bytes.to_be_bytes());
        out[16] = self.identical as u8;
        out[17..21].copy_from_slice(&self.partner.to_be_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Detail {
            k: u32_at(0),
            file: u32_at(4),
            bytes: u64::from_be_bytes(b[8..16].try_into().expect("8 bytes")),
            identical: b[16] != 0,
            partner: u32_at(17),
        }
    }
}

/// The sorted streams of the workers as one, in order: a group's records
/// are together, its greatest last.
pub(super) struct Merged<T: FixedRecord> {
    streams: Vec<Sorted<T>>,
    heads: Vec<Option<T>>,
}

impl<T: FixedRecord> Merged<T> {
    pub(super) fn new(mut streams: Vec<Sorted<T>>) -> Result<Merged<T>> {
        let heads = streams
            .iter_mut()
            .map(|s| s.next_item())
            .collect::<Result<_>>()?;
        Ok(Merged { streams, heads })
    }

    pub(super) fn next_item(&mut self) -> Result<Option<T>> {
        let mut at: Option<usize> = None;
        for (i, h) in self.heads.iter().enumerate() {
            if let Some(h) = h {
                if at.is_none_or(|k| self.heads[k].is_some_and(|m| *h < m)) {
                    at = Some(i);
                }
            }
        }
        let Some(i) = at else { return Ok(None) };
        let next = self.streams[i].next_item()?;
        Ok(std::mem::replace(&mut self.heads[i], next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_credits_sort_as_their_fields_and_round_trip() {
        let fields = [
            (1, 2, 3, 5_000_000_000, false),
            (1, 2, 3, 4_999_999_999, true),
            (1, 2, 3, 1 << 32, false),
            (1, 2, 3, (1 << 32) - 1, true),
            (1, 2, 4, 0, false),
            (1, 3, 0, 7, true),
            (2, 0, 0, 0, false),
            (0, u32::MAX - 1, u32::MAX, u64::MAX, true),
        ];
        let mut packed: Vec<Credit> = fields
            .iter()
            .map(|&(a, b, f, n, i)| Credit::new(a, b, f, n, i))
            .collect();
        for c in &packed {
            let mut buf = [0; Credit::SIZE];
            c.encode(&mut buf);
            assert_eq!(Credit::decode(&buf), *c);
        }
        packed.sort_unstable();
        let mut want = fields.to_vec();
        want.sort_unstable();
        let got: Vec<_> = packed
            .iter()
            .map(|c| (c.da(), c.db(), c.file(), c.bytes(), c.identical()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_combiner_keeps_the_best_credit_of_each_file_in_a_pair() {
        // 256 slots for 1,000 groups: most are displaced and come back.
        let mut c = Combiner::new(0);
        let credits = || {
            (0..3u64).flat_map(|round| {
                (0..2000u32).map(move |i| {
                    // Each group twice in a row, then again in later rounds.
                    let g = i / 2;
                    let bytes = (u64::from(g) * 7 + round * 13 + u64::from(i % 2) * 29) % 50;
                    Credit::new(g % 10, 10 + g % 7, g, bytes, round == 1)
                })
            })
        };
        let mut out = Vec::new();
        for credit in credits() {
            out.extend(c.put(credit));
        }
        out.extend(c.drain());
        assert!(c.drain().next().is_none());
        // The best of each group, as the sorted credits' last.
        let best = |v: &mut Vec<Credit>| {
            v.sort_unstable();
            let mut b: Vec<Credit> = Vec::new();
            for &x in v.iter() {
                match b.last_mut() {
                    Some(l) if l.group() == x.group() => *l = x,
                    _ => b.push(x),
                }
            }
            b
        };
        let mut all: Vec<Credit> = credits().collect();
        assert!(out.len() <= all.len() / 2, "{} of {}", out.len(), all.len());
        assert_eq!(best(&mut out), best(&mut all));
    }

    #[test]
    fn the_combiner_keeps_the_best_partner_of_each_file_in_a_listed_pair() {
        let mut c = Combiner::new(0);
        let d = |k, file, bytes, partner| Detail {
            k,
            file,
            bytes,
            identical: false,
            partner,
        };
        // 3,000 groups in 256 slots, each met three times in turn.
        let all: Vec<Detail> = (0..3u64)
            .flat_map(|round| {
                (0..3000u32).map(move |g| {
                    d(
                        g % 40,
                        g,
                        (u64::from(g) * 31 + round * 17) % 23,
                        round as u32,
                    )
                })
            })
            .collect();
        let mut out: Vec<Detail> = all.iter().filter_map(|&x| c.put(x)).collect();
        out.extend(c.drain());
        let last_of_groups = |mut v: Vec<Detail>| {
            v.sort_unstable();
            let mut b: Vec<Detail> = Vec::new();
            for x in v {
                match b.last_mut() {
                    Some(l) if l.same_group(&x) => *l = x,
                    _ => b.push(x),
                }
            }
            b
        };
        assert_eq!(last_of_groups(out), last_of_groups(all));
    }
}
