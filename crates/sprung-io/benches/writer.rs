//! Throughput of the output path: `BackgroundWriter::push_row` (what the stepping loop pays
//! per step) and the direct `ResultWriter::write_row` for CSV and Parquet.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use sprung_io::{BackgroundOptions, BackgroundWriter, Channel, Format, ResultWriter};

const CHANNELS: usize = 12;
const ROWS: usize = 10_000;

fn channels() -> Vec<Channel> {
    (0..CHANNELS)
        .map(|k| Channel::new(format!("q{k}"), "m", ""))
        .collect()
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("sprung-io-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut row = [0.0f64; CHANNELS];
    for (name, format) in [("csv", Format::Csv), ("parquet", Format::Parquet)] {
        let path = dir.join(format!("bench.{name}"));
        // Only the push loop is timed (the cost seen by the stepping loop); creating and
        // finishing the file happen outside the measurement.
        c.bench_function(&format!("background push_row x{ROWS} ({name})"), |b| {
            b.iter_custom(|iters| {
                let mut total = std::time::Duration::ZERO;
                for _ in 0..iters {
                    let mut w = BackgroundWriter::create(
                        &path,
                        format,
                        &channels(),
                        json!({}),
                        BackgroundOptions::default(),
                    )
                    .unwrap();
                    let start = std::time::Instant::now();
                    for i in 0..ROWS {
                        let t = i as f64 * 1e-3;
                        for (k, v) in row.iter_mut().enumerate() {
                            *v = t * k as f64;
                        }
                        w.push_row(t, &row).unwrap();
                    }
                    total += start.elapsed();
                    w.finish("bench", json!(null)).unwrap();
                }
                total
            })
        });
        c.bench_function(&format!("direct write_row x{ROWS} ({name})"), |b| {
            b.iter(|| {
                let mut w = ResultWriter::create(&path, format, &channels(), json!({})).unwrap();
                for i in 0..ROWS {
                    let t = i as f64 * 1e-3;
                    for (k, v) in row.iter_mut().enumerate() {
                        *v = t * k as f64;
                    }
                    w.write_row(t, &row).unwrap();
                }
                w.finish("bench", json!(null)).unwrap()
            })
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
