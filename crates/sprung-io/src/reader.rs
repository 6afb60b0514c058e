//! Reading result files written by [`crate::ResultWriter`] (or compatible files from elsewhere,
//! e.g. a reference solution exported from another tool as CSV with a `time` column).
//!
//! The format is selected by the extension (`.csv`, `.parquet`/`.pq`). Units and descriptions
//! come from the CSV sidecar `<path>.meta.json` or from the Parquet key-value metadata when
//! present; otherwise they are empty.
//!
//! Results of a run that did not finish (killed, disk full) are read as far as they were
//! flushed, with a warning in [`ResultSet::warnings`]: a CSV file whose last line has no line
//! end (a row cut by the crash) loses that line; a Parquet result whose file is missing is read
//! from its part files `<path>.parts/part-*.parquet` (also when the folder itself is given).
//! Rows with a wrong number of fields or text that is not a number are errors, never skipped.

use std::fs::File;
use std::path::Path;

use parquet::basic::Type as PhysicalType;
use parquet::column::reader::ColumnReader;
use parquet::file::reader::{FileReader, SerializedFileReader};
use serde_json::Value;

use crate::channel::{
    Format, MetaDocument, PARQUET_META_KEY, PARQUET_UNIT_PREFIX, TIME_COLUMN, sidecar_path,
};
use crate::error::IoError;

/// One channel of a result set with its samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Unit (empty if unknown).
    pub unit: String,
    /// Description (empty if unknown).
    pub description: String,
    /// Samples, one per entry of [`ResultSet::time`].
    pub values: Vec<f64>,
}

/// A result set read from a file: a time vector plus named channels.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultSet {
    /// Output times in seconds.
    pub time: Vec<f64>,
    /// Channels in file order (without `time`).
    pub columns: Vec<Column>,
    /// What the reader noticed and repaired (partial last CSV line dropped, unfinished run read
    /// from its parts, ...). Callers should show these to the user.
    pub warnings: Vec<String>,
    /// The metadata document, if the file carried one.
    pub meta: Option<MetaDocument>,
}

impl ResultSet {
    /// Samples of channel `name`, or `None` if there is no such channel.
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.values.as_slice())
    }

    /// Channel `name` with unit and description, or `None` if there is no such channel.
    pub fn channel(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Unit of channel `name` (`s` for `time`), or `None` if there is no such channel.
    pub fn unit(&self, name: &str) -> Option<&str> {
        if name == TIME_COLUMN {
            return Some(crate::channel::TIME_UNIT);
        }
        self.columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.unit.as_str())
    }

    /// Channel names in file order.
    pub fn channel_names(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|c| c.name.as_str())
    }

    /// The run metadata (model, solver, stop reason, ...), `Null` if absent.
    pub fn metadata(&self) -> &Value {
        static NULL: Value = Value::Null;
        self.meta.as_ref().map_or(&NULL, |m| &m.metadata)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// `true` if there are no rows.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
}

/// Reads a CSV or Parquet result file (format chosen by extension).
pub fn read_results(path: impl AsRef<Path>) -> Result<ResultSet, IoError> {
    let path = path.as_ref();
    if path.is_dir() {
        return read_parquet_parts(path, None);
    }
    let mut set = match Format::from_path(path)? {
        Format::Csv => read_csv(path)?,
        Format::Parquet => {
            let parts = crate::writer::parts_dir_of(path);
            if !path.exists() && parts.is_dir() {
                return read_parquet_parts(&parts, Some(path));
            }
            read_parquet(path)?
        }
    };
    if let Some(m) = &set.meta
        && !m.complete
    {
        set.warnings.push(format!(
            "'{}' is from a run that did not finish (killed or still running); read {} rows up to t = {} s",
            path.display(),
            set.time.len(),
            set.time.last().copied().unwrap_or(f64::NAN)
        ));
    }
    Ok(set)
}

/// Reads the part files of an unfinished Parquet result (`<result>.parts/part-*.parquet`, in
/// name order). Metadata: the sidecar `<result>.meta.json` if present (written on a write
/// failure), else the last part's.
fn read_parquet_parts(dir: &Path, result: Option<&Path>) -> Result<ResultSet, IoError> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| IoError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("part-") && n.ends_with(".parquet"))
        })
        .collect();
    files.sort();
    let Some(first) = files.first() else {
        return Err(IoError::malformed(
            dir,
            "no part files (part-*.parquet): the run wrote no rows before it stopped",
        ));
    };
    let mut set = read_parquet(first)?;
    for f in &files[1..] {
        let next = read_parquet(f)?;
        let same = next.columns.len() == set.columns.len()
            && next
                .columns
                .iter()
                .zip(&set.columns)
                .all(|(a, b)| a.name == b.name);
        if !same {
            return Err(IoError::malformed(
                f,
                "the part files have different columns; they are not from one run",
            ));
        }
        set.time.extend_from_slice(&next.time);
        for (c, n) in set.columns.iter_mut().zip(next.columns) {
            c.values.extend_from_slice(&n.values);
        }
        set.meta = next.meta;
    }
    let result_path = match result {
        Some(p) => p.to_path_buf(),
        None => {
            let s = dir.as_os_str().to_string_lossy();
            std::path::PathBuf::from(s.strip_suffix(".parts").unwrap_or(&s).to_string())
        }
    };
    let side = sidecar_path(&result_path);
    if side.exists() {
        let text = std::fs::read(&side).map_err(|e| IoError::io(&side, e))?;
        let meta: MetaDocument =
            serde_json::from_slice(&text).map_err(|e| IoError::json(&side, e))?;
        set.meta = Some(meta);
    }
    let reason = set
        .meta
        .as_ref()
        .and_then(|m| m.metadata.get("stop_reason"))
        .and_then(Value::as_str)
        .unwrap_or("killed or still running")
        .to_string();
    set.warnings.push(format!(
        "'{}' is missing: read {} rows up to t = {} s from {} part files in '{}' of a run that did not finish ({reason})",
        result_path.display(),
        set.time.len(),
        set.time.last().copied().unwrap_or(f64::NAN),
        files.len(),
        dir.display()
    ));
    Ok(set)
}

/// Applies units and descriptions from a metadata document to the columns.
fn apply_meta(columns: &mut [Column], meta: &MetaDocument) {
    for col in columns {
        if let Some(ch) = meta.channels.iter().find(|c| c.name == col.name) {
            col.unit = ch.unit.clone();
            col.description = ch.description.clone();
        }
    }
}

fn split_time(path: &Path, mut columns: Vec<Column>) -> Result<(Vec<f64>, Vec<Column>), IoError> {
    let Some(pos) = columns.iter().position(|c| c.name == TIME_COLUMN) else {
        return Err(IoError::malformed(
            path,
            format!("no '{TIME_COLUMN}' column; result files need a time column in seconds"),
        ));
    };
    let time = columns.remove(pos).values;
    for (i, c) in columns.iter().enumerate() {
        if columns[..i].iter().any(|o| o.name == c.name) {
            return Err(IoError::malformed(
                path,
                format!("column name '{}' occurs more than once", c.name),
            ));
        }
    }
    Ok((time, columns))
}

fn read_csv(path: &Path) -> Result<ResultSet, IoError> {
    let mut bytes = std::fs::read(path).map_err(|e| IoError::io(path, e))?;
    let mut warnings = Vec::new();
    // In a file written by sprung (it has the sidecar) a last line without line end is a row
    // cut by a crash or a full disk (the writer ends every row with '\n'): drop it rather than
    // accept a row with truncated numbers. Files from elsewhere often omit the final line end.
    if sidecar_path(path).exists()
        && let Some(&last) = bytes.last()
        && last != b'\n'
        && let Some(nl) = bytes.iter().rposition(|&b| b == b'\n')
    {
        let cut = String::from_utf8_lossy(&bytes[nl + 1..]).into_owned();
        let line = bytes[..=nl].iter().filter(|&&b| b == b'\n').count() + 1;
        bytes.truncate(nl + 1);
        warnings.push(format!(
            "'{}': ignored the incomplete last line {line} ('{}'): it has no line end, so the run was cut off while writing it",
            path.display(),
            cut.chars().take(60).collect::<String>()
        ));
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(bytes.as_slice());
    let headers = reader.headers().map_err(|e| IoError::csv(path, e))?.clone();
    let mut columns: Vec<Column> = headers
        .iter()
        .map(|h| Column {
            name: h.to_string(),
            unit: String::new(),
            description: String::new(),
            values: Vec::new(),
        })
        .collect();
    let mut record = csv::StringRecord::new();
    let mut line = 1u64;
    while reader
        .read_record(&mut record)
        .map_err(|e| IoError::csv(path, e))?
    {
        line += 1;
        for (k, field) in record.iter().enumerate() {
            let v: f64 = field.parse().map_err(|_| {
                IoError::malformed(
                    path,
                    format!(
                        "row {line}, column '{}': '{field}' is not a number",
                        columns[k].name
                    ),
                )
            })?;
            columns[k].values.push(v);
        }
    }
    let (time, mut columns) = split_time(path, columns)?;
    let side = sidecar_path(path);
    let meta = if side.exists() {
        let text = std::fs::read(&side).map_err(|e| IoError::io(&side, e))?;
        let meta: MetaDocument =
            serde_json::from_slice(&text).map_err(|e| IoError::json(&side, e))?;
        apply_meta(&mut columns, &meta);
        Some(meta)
    } else {
        None
    };
    Ok(ResultSet {
        time,
        columns,
        meta,
        warnings,
    })
}

fn read_parquet(path: &Path) -> Result<ResultSet, IoError> {
    let file = File::open(path).map_err(|e| IoError::io(path, e))?;
    let reader = SerializedFileReader::new(file).map_err(|e| IoError::parquet(path, e))?;
    let md = reader.metadata();
    let schema = md.file_metadata().schema_descr();
    let mut columns = Vec::with_capacity(schema.num_columns());
    for i in 0..schema.num_columns() {
        let c = schema.column(i);
        if c.physical_type() != PhysicalType::DOUBLE || c.max_rep_level() != 0 {
            return Err(IoError::malformed(
                path,
                format!(
                    "column '{}' is not a flat DOUBLE column (found {:?}); only f64 channels are supported",
                    c.path(),
                    c.physical_type()
                ),
            ));
        }
        columns.push(Column {
            name: c.path().string(),
            unit: String::new(),
            description: String::new(),
            values: Vec::with_capacity(md.file_metadata().num_rows().max(0) as usize),
        });
    }
    let mut def_levels: Vec<i16> = Vec::new();
    let mut batch: Vec<f64> = Vec::new();
    for rg in 0..md.num_row_groups() {
        let rg_reader = reader
            .get_row_group(rg)
            .map_err(|e| IoError::parquet(path, e))?;
        let rows = md.row_group(rg).num_rows().max(0) as usize;
        for (i, col) in columns.iter_mut().enumerate() {
            let optional = schema.column(i).max_def_level() > 0;
            let ColumnReader::DoubleColumnReader(mut cr) = rg_reader
                .get_column_reader(i)
                .map_err(|e| IoError::parquet(path, e))?
            else {
                return Err(IoError::malformed(
                    path,
                    format!("column '{}' is not DOUBLE", col.name),
                ));
            };
            let mut read = 0usize;
            while read < rows {
                batch.clear();
                def_levels.clear();
                let (records, values, _) = cr
                    .read_records(
                        rows - read,
                        optional.then_some(&mut def_levels),
                        None,
                        &mut batch,
                    )
                    .map_err(|e| IoError::parquet(path, e))?;
                if records == 0 {
                    break;
                }
                if optional {
                    // Nulls become NaN.
                    let mut it = batch[..values].iter();
                    for &d in &def_levels[..records] {
                        col.values.push(if d > 0 {
                            *it.next().unwrap_or(&f64::NAN)
                        } else {
                            f64::NAN
                        });
                    }
                } else {
                    col.values.extend_from_slice(&batch[..values]);
                }
                read += records;
            }
            if read != rows {
                return Err(IoError::malformed(
                    path,
                    format!(
                        "column '{}' of row group {rg} has {read} values, expected {rows}",
                        col.name
                    ),
                ));
            }
        }
    }
    let (time, mut columns) = split_time(path, columns)?;
    let mut meta = None;
    if let Some(kvs) = md.file_metadata().key_value_metadata() {
        for kv in kvs {
            if kv.key == PARQUET_META_KEY {
                if let Some(v) = &kv.value {
                    let m: MetaDocument =
                        serde_json::from_str(v).map_err(|e| IoError::json(path, e))?;
                    meta = Some(m);
                }
            } else if let Some(name) = kv.key.strip_prefix(PARQUET_UNIT_PREFIX)
                && let (Some(col), Some(unit)) =
                    (columns.iter_mut().find(|c| c.name == name), &kv.value)
            {
                col.unit = unit.clone();
            }
        }
    }
    if let Some(m) = &meta {
        apply_meta(&mut columns, m);
    }
    Ok(ResultSet {
        time,
        columns,
        meta,
        warnings: Vec::new(),
    })
}
