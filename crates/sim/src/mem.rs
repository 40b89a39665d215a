//! Large map allocations. On Linux the maps are advised to use transparent huge
//! pages (`madvise(MADV_HUGEPAGE)`) before they are first touched: the FTL's
//! random map accesses then miss the TLB far less often (a large speed-up for
//! multi-GiB devices). No file system access; a failure is ignored.

/// A `Vec<u32>` of `n` copies of `fill`, huge-page backed where possible.
pub fn big_vec_u32(n: usize, fill: u32) -> Vec<u32> {
    let mut v: Vec<u32> = Vec::with_capacity(n);
    advise_huge(v.as_mut_ptr() as *mut u8, n * std::mem::size_of::<u32>());
    v.resize(n, fill);
    v
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *mut u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < 2 * HUGE {
        return;
    }
    let start = (ptr as usize).div_ceil(HUGE) * HUGE;
    let end = (ptr as usize + bytes) / HUGE * HUGE;
    if end > start {
        // SAFETY: [start, end) lies inside the allocation owned by the caller's Vec;
        // MADV_HUGEPAGE only changes how the kernel backs it, never its contents.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _bytes: usize) {}

/// Ask the CPU to bring `v[i]` into cache ahead of its use (a hint: no
/// effect on results; out of range is ignored). The page FTL's maps are far
/// larger than the caches, so a random map entry is a cache miss; issuing
/// the load early lets the miss overlap other work.
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    if let Some(e) = v.get(i) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch never faults and changes no memory; the address
        // is an element of a live slice anyway.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                e as *const T as *const i8,
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = e;
    }
}
