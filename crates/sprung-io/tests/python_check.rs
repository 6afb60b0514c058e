//! Optional cross-check with an independent reader: if `python3` with pandas and pyarrow is
//! available, pandas must read both the CSV and the Parquet file with the exact values. When
//! they are not installed the test prints a note and passes (Python is not part of the build).

use std::process::Command;

use serde_json::json;
use sprung_io::{Channel, Format, ResultWriter};

fn python_with_pandas() -> bool {
    Command::new("python3")
        .args(["-c", "import pandas, pyarrow"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn pandas_reads_csv_and_parquet() {
    if !python_with_pandas() {
        eprintln!("skipped: python3 with pandas and pyarrow is not available");
        return;
    }
    let dir = std::env::temp_dir().join(format!("sprung-io-py-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let channels = [
        Channel::new("x_wheel", "m", "wheel displacement"),
        Channel::new("F_bushing", "N", "bushing force"),
    ];
    let n = 257;
    for name in ["py.csv", "py.parquet"] {
        let path = dir.join(name);
        let format = sprung_io::Format::from_path(&path).unwrap();
        let mut w = ResultWriter::create(&path, format, &channels, json!({"model": "py"})).unwrap();
        for i in 0..n {
            let t = i as f64 * 1e-3;
            w.write_row(t, &[(t * 7.0 - 0.5) * 1e-3, 1.0 / (1.0 + t)])
                .unwrap();
        }
        w.finish("end", json!(null)).unwrap();
        let reader = match format {
            Format::Csv => "pd.read_csv(p, float_precision='round_trip')",
            Format::Parquet => "pd.read_parquet(p)",
        };
        let script = format!(
            "import sys, math, json\n\
             import pandas as pd, pyarrow.parquet as pq\n\
             p = sys.argv[1]\n\
             df = {reader}\n\
             assert list(df.columns) == ['time', 'x_wheel', 'F_bushing'], list(df.columns)\n\
             assert len(df) == {n}\n\
             for i in range({n}):\n\
             \x20   t = i * 1e-3\n\
             \x20   assert df['time'][i] == t\n\
             \x20   assert df['x_wheel'][i] == (t * 7.0 - 0.5) * 1e-3\n\
             \x20   assert df['F_bushing'][i] == 1.0 / (1.0 + t)\n\
             if p.endswith('.parquet'):\n\
             \x20   kv = pq.read_metadata(p).metadata\n\
             \x20   meta = json.loads(kv[b'sprung.meta'])\n\
             \x20   assert meta['channels'][1]['unit'] == 'N'\n\
             \x20   assert kv[b'sprung.unit.x_wheel'] == b'm'\n\
             print('ok')\n"
        );
        let out = Command::new("python3")
            .arg("-c")
            .arg(&script)
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pandas check of {name} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
