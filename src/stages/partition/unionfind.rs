//! Weighted union-find over dense `u32` ids: the heart of paper 2.5 step 3.
//!
//! `fsim-partition` unions every file that shares a (not too common) chunk;
//! the connected components are the independent sub-problems. The paper
//! needed 1 GB for 15 M files; this one costs **5 bytes per element** (a
//! `u32` parent and a `u8` rank), i.e. 75 MB for 15 M files, and nothing
//! else: [`UnionFind::into_components`] turns the same two arrays into
//! "smallest id of my component" labels and a "component has ≥2 members"
//! flag without allocating.
//!
//! Union by rank keeps trees O(log n) deep (rank ≤ 32 fits a `u8`); path
//! halving in [`UnionFind::find`] makes the amortised cost near constant
//! without recursion or a second pass.

/// Back a large, not yet touched vector with transparent huge pages where
/// the system allows it (Linux `MADV_HUGEPAGE`). Every find is a random
/// access into tables of tens of MB: with 4 KiB pages nearly each one also
/// misses the TLB, which costs as much as the cache miss itself.
fn huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let addr = v.as_mut_ptr() as usize;
        let start = addr.next_multiple_of(PAGE);
        let end = (addr + v.capacity() * std::mem::size_of::<T>()) / PAGE * PAGE;
        if end >= start + (4 << 20) {
            // SAFETY: the range lies inside the vector's own allocation;
            // the advice changes how its pages are backed, never their
            // contents. Failure (no THP support) only means small pages.
            let _ = unsafe {
                rustix::mm::madvise(
                    start as *mut std::ffi::c_void,
                    end - start,
                    rustix::mm::Advice::LinuxHugepage,
                )
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Disjoint sets over `0..n`.
#[derive(Debug, Clone)]
pub struct UnionFind {
    parent: Vec<u32>,
    rank: Vec<u8>,
}

impl UnionFind {
    /// `n` singleton sets. Panics if `n` exceeds `u32::MAX + 1` ids.
    pub fn new(n: usize) -> Self {
        assert!(
            n as u64 <= u32::MAX as u64 + 1,
            "union-find over more than 2^32 elements"
        );
        let mut parent = Vec::with_capacity(n);
        let mut rank = Vec::with_capacity(n);
        huge_pages(&mut parent);
        huge_pages(&mut rank);
        parent.extend(0..n as u32);
        rank.resize(n, 0u8);
        UnionFind { parent, rank }
    }

    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Representative of `x`'s set (path halving: every other node on the
    /// path is pointed at its grandparent).
    #[inline]
    pub fn find(&mut self, x: u32) -> u32 {
        let p = &mut self.parent;
        let mut x = x as usize;
        loop {
            let px = p[x] as usize;
            if px == x {
                return x as u32;
            }
            let gx = p[px];
            p[x] = gx;
            x = gx as usize;
        }
    }

    /// Hint that `x` will be looked up soon. With random ids over a large
    /// table every `find` is a cache miss; callers that know their next
    /// unions ahead (fsim-partition queues a few) overlap those misses.
    #[inline]
    pub fn prefetch(&self, x: u32) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let p = self.parent.as_ptr().wrapping_add(x as usize) as *const i8;
            // A set met for the first time is its own root: its rank is
            // read too.
            let r = self.rank.as_ptr().wrapping_add(x as usize) as *const i8;
            // SAFETY: a prefetch is only a hint: it never faults and reads
            // nothing into the program, whatever the address.
            unsafe {
                _mm_prefetch(p, _MM_HINT_T0);
                _mm_prefetch(r, _MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = x;
    }

    /// Merge the sets of `a` and `b`; true when they were different.
    #[inline]
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let ra = self.find(a);
        let rb = self.find(b);
        if ra == rb {
            return false;
        }
        let (ka, kb) = (self.rank[ra as usize], self.rank[rb as usize]);
        if ka < kb {
            self.parent[ra as usize] = rb;
        } else {
            self.parent[rb as usize] = ra;
            if ka == kb {
                self.rank[ra as usize] = ka + 1;
            }
        }
        true
    }

    /// True when `a` and `b` are in the same set.
    pub fn same(&mut self, a: u32, b: u32) -> bool {
        self.find(a) == self.find(b)
    }

    /// Consume the structure and label each element with the **smallest id
    /// of its component** (a label that does not depend on union order),
    /// reusing the parent array for labels and the rank array for the
    /// "component has two or more members" flag: no extra memory.
    pub fn into_components(mut self) -> Components {
        let n = self.parent.len();
        // Point every element directly at its root.
        for i in 0..n {
            let r = self.find(i as u32);
            self.parent[i] = r;
        }
        // Ascending relabel: the first member of a component that we meet
        // is its smallest; we re-point the root at it so later members find
        // it. After step i, parent[i] is the smallest id of i's component.
        let p = &mut self.parent;
        for i in 0..n {
            let r = p[i] as usize;
            let m = p[r] as usize;
            let c = if m != r {
                m
            } else if r > i {
                p[r] = i as u32;
                i
            } else {
                r
            };
            p[i] = c as u32;
        }
        let flag = &mut self.rank;
        flag.iter_mut().for_each(|f| *f = 0);
        for i in 0..n {
            let c = p[i] as usize;
            if c != i {
                flag[c] = 1;
                flag[i] = 1;
            }
        }
        Components {
            label: self.parent,
            multi: self.rank,
        }
    }
}

/// A [`UnionFind`] fed with a stream of pairs, each union done
/// [`QueuedUnions::DEPTH`] pairs after it was asked for, so that the cache
/// misses of consecutive pairs overlap instead of stalling one after the
/// other (`fsim-partition`: random file ids over a table larger than the
/// caches). Two stages: a pair's elements are prefetched when it arrives;
/// halfway, their parents (now in cache) are read and the grandparents
/// prefetched, which covers the two levels a find usually walks.
pub struct QueuedUnions {
    uf: UnionFind,
    pending: std::collections::VecDeque<(u32, u32)>,
}

impl QueuedUnions {
    /// Pairs in flight.
    pub const DEPTH: usize = 32;

    pub fn new(n: usize) -> Self {
        QueuedUnions {
            uf: UnionFind::new(n),
            pending: std::collections::VecDeque::with_capacity(Self::DEPTH + 1),
        }
    }

    /// Union `a` and `b` (later).
    #[inline]
    pub fn queue(&mut self, a: u32, b: u32) {
        self.uf.prefetch(a);
        self.uf.prefetch(b);
        self.pending.push_back((a, b));
        let len = self.pending.len();
        if len > Self::DEPTH / 2 {
            let (x, y) = self.pending[len - 1 - Self::DEPTH / 2];
            self.uf.prefetch(self.uf.parent[x as usize]);
            self.uf.prefetch(self.uf.parent[y as usize]);
        }
        if len > Self::DEPTH {
            if let Some((x, y)) = self.pending.pop_front() {
                self.uf.union(x, y);
            }
        }
    }

    /// Apply the queued unions and label the components.
    pub fn into_components(mut self) -> Components {
        while let Some((x, y)) = self.pending.pop_front() {
            self.uf.union(x, y);
        }
        self.uf.into_components()
    }
}

/// Components as labels: see [`UnionFind::into_components`].
#[derive(Debug, Clone)]
pub struct Components {
    label: Vec<u32>,
    multi: Vec<u8>,
}

impl Components {
    /// Smallest id of `x`'s component.
    #[inline]
    pub fn label(&self, x: u32) -> u32 {
        self.label[x as usize]
    }

    /// True when `x`'s component has two or more members.
    #[inline]
    pub fn in_multi(&self, x: u32) -> bool {
        self.multi[x as usize] != 0
    }

    pub fn len(&self) -> usize {
        self.label.len()
    }

    pub fn is_empty(&self) -> bool {
        self.label.is_empty()
    }

    /// (components with ≥ 2 members, elements in them).
    pub fn multi_counts(&self) -> (u64, u64) {
        let mut comps = 0;
        let mut members = 0;
        for (i, (&l, &m)) in self.label.iter().zip(&self.multi).enumerate() {
            if m != 0 {
                members += 1;
                if l as usize == i {
                    comps += 1;
                }
            }
        }
        (comps, members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// The model: smallest id of each BFS component.
    fn bfs_labels(n: usize, edges: &[(u32, u32)]) -> Vec<u32> {
        let mut adj = vec![Vec::new(); n];
        for &(a, b) in edges {
            adj[a as usize].push(b as usize);
            adj[b as usize].push(a as usize);
        }
        let mut label = vec![u32::MAX; n];
        for s in 0..n {
            if label[s] != u32::MAX {
                continue;
            }
            label[s] = s as u32;
            let mut q = VecDeque::from([s]);
            while let Some(x) = q.pop_front() {
                for &y in &adj[x] {
                    if label[y] == u32::MAX {
                        label[y] = s as u32;
                        q.push_back(y);
                    }
                }
            }
        }
        label
    }

    proptest! {
        #[test]
        fn components_match_bfs(n in 1usize..200, raw in proptest::collection::vec((any::<u32>(), any::<u32>()), 0..300)) {
            let edges: Vec<(u32, u32)> = raw.iter().map(|&(a, b)| (a % n as u32, b % n as u32)).collect();
            let mut uf = UnionFind::new(n);
            for &(a, b) in &edges {
                uf.union(a, b);
            }
            let model = bfs_labels(n, &edges);
            for a in 0..n as u32 {
                for b in (a..n as u32).step_by(7) {
                    prop_assert_eq!(uf.same(a, b), model[a as usize] == model[b as usize]);
                }
            }
            let comps = uf.into_components();
            let mut sizes = vec![0u32; n];
            for &l in &model {
                sizes[l as usize] += 1;
            }
            for i in 0..n {
                prop_assert_eq!(comps.label(i as u32), model[i]);
                prop_assert_eq!(comps.in_multi(i as u32), sizes[model[i] as usize] >= 2);
            }
        }
    }

    #[test]
    fn small_known() {
        let mut uf = UnionFind::new(6);
        assert!(uf.union(5, 3));
        assert!(uf.union(3, 4));
        assert!(!uf.union(4, 5));
        assert!(uf.union(1, 0));
        let c = uf.into_components();
        let labels: Vec<u32> = (0..6).map(|i| c.label(i)).collect();
        assert_eq!(labels, [0, 0, 2, 3, 3, 3]);
        assert_eq!(c.multi_counts(), (2, 5));
        assert!(!c.in_multi(2));
    }

    #[test]
    fn memory_is_five_bytes_per_element() {
        let uf = UnionFind::new(1000);
        assert_eq!(uf.parent.capacity() * 4 + uf.rank.capacity(), 5000);
    }
}
