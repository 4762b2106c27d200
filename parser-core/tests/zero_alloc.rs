//! The allocation-free mode really allocates nothing: a counting global allocator watches a whole
//! parse and a full stream of every conformance reply.
#![cfg(all(feature = "heapless", feature = "alloc"))] // compared with (or checked against) the alloc mode
#![allow(unsafe_code)] // a counting global allocator (GlobalAlloc is an unsafe trait)

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use parser_core::fixed;

struct Counting;

thread_local!(static ALLOCATIONS: Cell<usize> = const { Cell::new(0) });

// SAFETY: forwards to the system allocator unchanged; only counts calls on this thread.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(|c| c.get())
}

#[test]
fn whole_parse_and_stream_allocate_nothing() {
    let cases = support::load("cline-v4.0.10.jsonl");
    let mut buf = vec![0u8; 200_000];
    let before = allocations();
    let mut blocks = 0;
    for c in &cases {
        let parsed = fixed::parse::<640, 320>(&c.input).expect("fits");
        blocks += parsed.blocks().iter().count();
        let mut p = fixed::StreamParser::<640, 320>::new(&mut buf);
        for chunk in c.input.as_bytes().chunks(7) {
            p.push_bytes(chunk).expect("fits");
        }
        blocks += p.finish().expect("complete").iter().count();
    }
    assert_eq!(allocations() - before, 0, "allocations during {} parses", 2 * cases.len());
    assert!(blocks > 5000);

    // The counter does count: the alloc mode allocates.
    let before = allocations();
    let _ = parser_core::parse("<read_file><path>a</path></read_file>");
    assert!(allocations() > before);
}
