//! Allocation of the large vectors a proof writes once front to back (witness, a/b/c
//! evaluations): hundreds of MB per small partition, GBs per 32 GiB one.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_vec_is_an_ordinary_vector() {
        let mut v: Vec<u64> = large_vec(3 << 20);
        assert!(v.is_empty() && v.capacity() >= 3 << 20);
        v.extend(0..3 << 20);
        assert_eq!(v[(3 << 20) - 1], (3 << 20) - 1);
        let none: Vec<u8> = large_vec(0);
        assert!(none.is_empty());
    }
}
