//! Optional cross-check with an independent reader: if `python3` with pandas and pyarrow is
//! available, pandas must read both the CSV and the Parquet file with the exact values. When
//! they are not installed the test passes with a visible `SKIPPED` line on stderr (written past
//! the test harness's capture; Python is not part of the build).

use std::process::Command;

use serde_json::json;
use sprung_io::{Channel, Format, ResultWriter};

#[test]
fn pandas_reads_csv_and_parquet() {
    let Some(python) = sprung_test_support::python_with_pandas() else {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED pandas_reads_csv_and_parquet: no python with pandas and pyarrow (set SPRUNG_TEST_PYTHON; `bash tools/test` does)"
        );
        return;
    };
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sprung-io-py-{}", std::process::id()));
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
            Format::Csv => "pd.read_csv(p)",
            Format::Parquet => "pd.read_parquet(p)",
        };
        let script = format!(
            "import sys, math, json\n\
             import pandas as pd, pyarrow.parquet as pq\n\
             p = sys.argv[1]\n\
             df = {reader}\n\
             assert list(df.columns) == ['time', 'x_wheel', 'F_bushing'], list(df.columns)\n\
             assert len(df) == {n}\n\
             exact = df\n\
             if p.endswith('.csv'):\n\
             \x20   import csv\n\
             \x20   rows = list(csv.reader(open(p)))[1:]\n\
             \x20   exact = {{k: [float(r[j]) for r in rows] for j, k in enumerate(df.columns)}}\n\
             for i in range({n}):\n\
             \x20   t = i * 1e-3\n\
             \x20   expect = {{'time': t, 'x_wheel': (t * 7.0 - 0.5) * 1e-3, 'F_bushing': 1.0 / (1.0 + t)}}\n\
             \x20   for k, v in expect.items():\n\
             \x20       assert exact[k][i] == v, (k, i, exact[k][i], v)\n\
             \x20       assert abs(df[k][i] - v) <= 1e-15 * abs(v), (k, i)\n\
             if p.endswith('.parquet'):\n\
             \x20   kv = pq.read_metadata(p).metadata\n\
             \x20   meta = json.loads(kv[b'sprung.meta'])\n\
             \x20   assert meta['channels'][1]['unit'] == 'N'\n\
             \x20   assert kv[b'sprung.unit.x_wheel'] == b'm'\n\
             \x20   sch = pq.read_schema(p)\n\
             \x20   assert sch.field('x_wheel').metadata[b'unit'] == b'm', sch\n\
             \x20   assert sch.field('F_bushing').metadata[b'description'] == b'bushing force'\n\
             \x20   assert sch.field('time').metadata == {{b'unit': b's'}}\n\
             \x20   assert str(sch.field('time').type) == 'double' and not sch.field('time').nullable\n\
             print('ok')\n"
        );
        let out = Command::new(&python)
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
