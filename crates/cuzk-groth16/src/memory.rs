//! Allocation of the large vectors a proof writes once front to back (witness, a/b/c
//! evaluations): hundreds of MB per small partition, GBs per 32 GiB one.
//!
//! Fresh memory is not free: the kernel zeroes every page on first touch, which is more than
//! half the time of the native witness of a 32 GiB partition (perf: `clear_page_erms` 65 %).
//! So finished witnesses can be handed back ([`recycle`], [`Witness::recycle`]) and their
//! vectors reused by the next partition ([`take`]), up to a process-wide byte limit that is
//! zero (nothing kept) unless set.

use std::sync::Mutex;

use crate::assignment::Witness;
use crate::Fr;

/// An empty vector with room for `capacity` values, whose pages the kernel may back with
/// transparent huge pages. Faulting a fresh multi-GB vector in 4 KiB pages (one fault, one
/// page clear and one cgroup charge each) costs as much as computing the witness it holds;
/// 2 MiB pages take 512 times fewer faults. Only advice: where huge pages are off or
/// unavailable, this is `Vec::with_capacity`.
pub fn large_vec<T>(capacity: usize) -> Vec<T> {
    let v = Vec::with_capacity(capacity);
    #[cfg(target_os = "linux")]
    advise_huge_pages(v.as_ptr() as usize, capacity * std::mem::size_of::<T>());
    v
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(start: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    let begin = start.next_multiple_of(HUGE);
    let end = (start + len) / HUGE * HUGE;
    if end > begin {
        // SAFETY: the range lies inside an allocation this process owns and is page aligned;
        // MADV_HUGEPAGE changes how its pages are backed, never their contents. A failure
        // (e.g. THP compiled out) leaves the default backing, so the result is ignored.
        unsafe {
            libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE);
        }
    }
}

/// Vectors kept for reuse, oldest first.
struct Recycled {
    limit: usize,
    held: usize,
    vecs: Vec<Vec<Fr>>,
}

static RECYCLED: Mutex<Recycled> = Mutex::new(Recycled {
    limit: 0,
    held: 0,
    vecs: Vec::new(),
});

fn recycled() -> std::sync::MutexGuard<'static, Recycled> {
    // The state is a list of plain vectors: a panic while holding the lock leaves it usable.
    RECYCLED.lock().unwrap_or_else(|e| e.into_inner())
}

fn bytes(v: &Vec<Fr>) -> usize {
    v.capacity() * std::mem::size_of::<Fr>()
}

impl Recycled {
    /// Frees the oldest vectors until `extra` more bytes fit under the limit.
    fn make_room(&mut self, extra: usize) {
        while self.held + extra > self.limit && !self.vecs.is_empty() {
            let v = self.vecs.remove(0);
            self.held -= bytes(&v);
        }
    }
}

/// Sets how many bytes of vectors [`recycle`] may keep for reuse (0, the default, keeps none),
/// freeing what is held beyond it. A caller that bounds its memory counts this as in use.
pub fn set_recycle_limit(limit: usize) {
    let mut r = recycled();
    r.limit = limit;
    r.make_room(0);
}

/// Bytes held for reuse now.
pub fn recycled_bytes() -> usize {
    recycled().held
}

/// An empty vector with room for `capacity` values: the smallest recycled vector that fits
/// (and is at most twice the size), else a fresh [`large_vec`].
pub fn take(capacity: usize) -> Vec<Fr> {
    let mut r = recycled();
    let fits = |v: &Vec<Fr>| v.capacity() >= capacity && v.capacity() / 2 <= capacity;
    let best = (r.vecs.iter().enumerate())
        .filter(|(_, v)| fits(v))
        .min_by_key(|(_, v)| v.capacity())
        .map(|(i, _)| i);
    match best {
        Some(i) => {
            let v = r.vecs.remove(i);
            r.held -= bytes(&v);
            v
        }
        None => {
            drop(r);
            large_vec(capacity)
        }
    }
}

/// Keeps `v` (emptied) for reuse if it fits under the limit, freeing older vectors to make
/// room; frees it otherwise.
pub fn recycle(mut v: Vec<Fr>) {
    let size = bytes(&v);
    let mut r = recycled();
    if size == 0 || size > r.limit {
        return;
    }
    v.clear();
    r.make_room(size);
    r.held += size;
    r.vecs.push(v);
}

impl Witness {
    /// Hands the witness's large vectors to [`recycle`].
    pub fn recycle(self) {
        for v in [self.a, self.b, self.c, self.aux] {
            recycle(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;

    #[test]
    fn large_vec_is_an_ordinary_vector() {
        let mut v: Vec<u64> = large_vec(3 << 20);
        assert!(v.is_empty() && v.capacity() >= 3 << 20);
        v.extend(0..3 << 20);
        assert_eq!(v[(3 << 20) - 1], (3 << 20) - 1);
        let none: Vec<u8> = large_vec(0);
        assert!(none.is_empty());
    }

    /// The only test touching the process-wide limit (tests run in parallel).
    #[test]
    fn recycled_vectors_are_reused_within_the_limit() {
        let kept = |n: usize| {
            let mut v = take(n);
            v.resize(n, Fr::ONE);
            let p = v.as_ptr();
            recycle(v);
            p
        };
        // Off by default: nothing is kept.
        kept(1000);
        assert_eq!(recycled_bytes(), 0);

        set_recycle_limit(64 * 1000);
        let p = kept(1000);
        assert_eq!(recycled_bytes(), 32 * 1000);
        // A fitting request gets the same buffer back, empty; one too small or too large
        // for it does not.
        let v = take(600);
        assert_eq!((v.as_ptr(), v.len()), (p, 0));
        assert_eq!(recycled_bytes(), 0);
        recycle(v);
        let (small, large) = (take(400), take(1001));
        assert!(small.as_ptr() != p && large.as_ptr() != p);
        drop((small, large));
        // Over the limit the oldest goes first; one larger than the limit is not kept;
        // lowering the limit frees.
        let (a, b, c) = (take(1000), take(1000), take(1000));
        let newest = c.as_ptr();
        assert_eq!(a.as_ptr(), p);
        recycle(a);
        recycle(b);
        assert_eq!(recycled_bytes(), 64 * 1000);
        recycle(c);
        assert_eq!(recycled_bytes(), 64 * 1000);
        let (x, y) = (take(1000), take(1000));
        assert!(x.as_ptr() != p && y.as_ptr() != p);
        assert!(x.as_ptr() == newest || y.as_ptr() == newest);
        recycle(x);
        recycle(y);
        recycle(Vec::with_capacity(3000));
        assert_eq!(recycled_bytes(), 64 * 1000);
        set_recycle_limit(0);
        assert_eq!(recycled_bytes(), 0);
    }
}
