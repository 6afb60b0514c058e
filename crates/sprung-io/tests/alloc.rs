//! `BackgroundWriter::push_row` must not allocate in steady state (project rule: nothing called
//! per time step allocates). A counting global allocator counts allocations made by the
//! simulation (test) thread only; the writer thread is free to allocate for its I/O.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use serde_json::json;
use sprung_io::{BackgroundOptions, BackgroundWriter, Channel, Format, WriterOptions};

struct Counting;

thread_local! {
    static TRACK: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

fn note() {
    // `try_with` so allocations during thread teardown do not panic.
    let _ = TRACK.try_with(|t| {
        if t.get() {
            let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        }
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn run(format: Format, name: &str) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sprung-io-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let channels: Vec<Channel> = (0..6)
        .map(|k| Channel::new(format!("c{k}"), "m", ""))
        .collect();
    let mut w = BackgroundWriter::create(
        &path,
        format,
        &channels,
        json!({"model": "alloc test"}),
        BackgroundOptions {
            rows_per_buffer: 64,
            buffers: 4,
            writer: WriterOptions {
                row_group_rows: 500,
            },
        },
    )
    .unwrap();
    let mut row = [0.0; 6];
    let mut step = |w: &mut BackgroundWriter, i: usize| {
        let t = i as f64 * 1e-3;
        for (k, v) in row.iter_mut().enumerate() {
            *v = (t * (k + 1) as f64).sin();
        }
        w.push_row(t, &row).unwrap();
    };
    // Warm-up: every buffer circulates at least once.
    for i in 0..2_000 {
        step(&mut w, i);
    }
    TRACK.with(|t| t.set(true));
    for i in 2_000..50_000 {
        step(&mut w, i);
    }
    TRACK.with(|t| t.set(false));
    let allocations = COUNT.with(|c| c.replace(0));
    assert_eq!(
        allocations,
        0,
        "push_row allocated {allocations} times in steady state ({:?})",
        w.stats()
    );
    assert!(w.stats().buffers_sent > 700);
    // Stalls (waiting for the writer) are expected in this tight loop and must not allocate
    // either; report how many occurred.
    eprintln!("{format:?}: {:?}", w.stats());
    let s = w.finish("end", json!(null)).unwrap();
    assert_eq!(s.rows, 50_000);
    let set = sprung_io::read_results(&path).unwrap();
    assert_eq!(set.len(), 50_000);
    assert_eq!(set.column("c2").unwrap()[49_999], (49.999f64 * 3.0).sin());
}

#[test]
fn push_row_does_not_allocate_in_steady_state() {
    // The counter itself works: a tracked allocation is seen.
    TRACK.with(|t| t.set(true));
    let v = std::hint::black_box(vec![1u8; 16]);
    TRACK.with(|t| t.set(false));
    drop(v);
    assert_eq!(COUNT.with(|c| c.replace(0)), 1);

    run(Format::Parquet, "alloc.parquet");
    run(Format::Csv, "alloc.csv");
}
