//! A global allocator that counts the heap bytes allocated and not yet freed, for the benches
//! and examples that weigh what something keeps (the search index, a waiting call, a
//! background task). Included by path; the includer installs it:
//!
//! `#[path = "support/live_bytes.rs"] mod live_bytes;` and
//! `#[global_allocator] static ALLOC: live_bytes::Counting = live_bytes::Counting;`

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// The system allocator, counting live bytes.
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

/// The heap bytes allocated and not freed so far.
pub fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

// SAFETY: every call is forwarded to `System` with the same arguments; the counter is a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
