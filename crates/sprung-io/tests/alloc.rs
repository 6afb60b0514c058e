//! `BackgroundWriter::push_row` must not allocate in steady state (project rule: nothing called
//! per time step allocates). A counting global allocator counts allocations made by the
//! simulation (test) thread only; the writer thread is free to allocate for its I/O.

use serde_json::json;
use sprung_io::{BackgroundOptions, BackgroundWriter, Channel, Format, WriterOptions};
use sprung_test_support::{CountingAllocator, allocations_in};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

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
    let allocations = allocations_in(|| {
        for i in 2_000..50_000 {
            step(&mut w, i);
        }
    });
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
    let mut v = Vec::new();
    assert_eq!(
        allocations_in(|| v = std::hint::black_box(vec![1u8; 16])),
        1
    );
    drop(v);

    run(Format::Parquet, "alloc.parquet");
    run(Format::Csv, "alloc.csv");
}
