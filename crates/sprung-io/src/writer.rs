//! Result file writers (CSV with JSON sidecar, Parquet) behind one interface.
//!
//! * CSV: a header row with the plain column names (`time`, then the channel names) and one row
//!   per output time, every value printed as the shortest decimal string that parses back to
//!   the identical `f64` (ryu). Units, descriptions and run metadata go to the sidecar
//!   `<path>.meta.json` ([`crate::MetaDocument`]); the sidecar is written at creation (so a crashed
//!   run still documents its channels) and rewritten at `finish`.
//! * Parquet: one required `DOUBLE` column per channel, `time` first, no compression. Rows are
//!   collected into row groups of [`WriterOptions::row_group_rows`] rows; `finish` (or `Drop`)
//!   writes the last partial row group and the footer, so a run that is stopped early still gives
//!   a valid file. The metadata document is stored as key-value file metadata under
//!   [`crate::PARQUET_META_KEY`], and each unit under `sprung.unit.<column>`. In addition an
//!   Arrow schema (`ARROW:schema`) gives every field the metadata `unit` (and `description`), so
//!   Arrow-based readers such as pyarrow show the units as field metadata.
//!
//! The per-row path of this writer performs I/O; for the real-time stepping loop use
//! [`crate::BackgroundWriter`], which moves the I/O to a separate thread.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Repetition, Type as PhysicalType};
use parquet::data_type::DoubleType;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use serde_json::Value;

use crate::arrow_schema::{ArrowField, base64, schema_message};
use crate::channel::{
    Channel, Format, MetaDocument, PARQUET_META_KEY, PARQUET_UNIT_PREFIX, TIME_COLUMN, TIME_UNIT,
    sidecar_path, validate_channels,
};
use crate::error::IoError;

/// Stop reason recorded when a writer is dropped without calling `finish`.
pub const STOP_REASON_DROPPED: &str = "writer dropped without finish";

/// Tuning options of a [`ResultWriter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterOptions {
    /// Rows per Parquet row group (ignored for CSV). Must be at least 1.
    pub row_group_rows: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            row_group_rows: 16_384,
        }
    }
}

/// Summary returned by `finish`.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteSummary {
    /// The result file.
    pub path: PathBuf,
    /// Format of the file.
    pub format: Format,
    /// Number of rows written.
    pub rows: u64,
    /// The final metadata document (as stored in the sidecar / file metadata).
    pub meta: MetaDocument,
}

struct CsvBackend {
    writer: csv::Writer<BufWriter<File>>,
    number: ryu::Buffer,
}

struct ParquetBackend {
    writer: SerializedFileWriter<File>,
    /// Pending row group, column-major; `columns[0]` is time.
    columns: Vec<Vec<f64>>,
    row_group_rows: usize,
}

enum Backend {
    Csv(CsvBackend),
    Parquet(ParquetBackend),
}

/// Writes a result set row by row to a CSV or Parquet file.
pub struct ResultWriter {
    path: PathBuf,
    format: Format,
    doc: MetaDocument,
    backend: Option<Backend>,
    rows: u64,
}

impl std::fmt::Debug for ResultWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultWriter")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("channels", &self.doc.channels.len())
            .field("rows", &self.rows)
            .field("open", &self.backend.is_some())
            .finish()
    }
}

impl ResultWriter {
    /// Creates (truncates) `path` and writes the header. `metadata` is the run metadata (model,
    /// solver, ...); `finish` adds the stop reason and further entries.
    pub fn create(
        path: impl AsRef<Path>,
        format: Format,
        channels: &[Channel],
        metadata: Value,
    ) -> Result<Self, IoError> {
        Self::create_with_options(path, format, channels, metadata, WriterOptions::default())
    }

    /// Like [`ResultWriter::create`] with explicit [`WriterOptions`].
    pub fn create_with_options(
        path: impl AsRef<Path>,
        format: Format,
        channels: &[Channel],
        metadata: Value,
        options: WriterOptions,
    ) -> Result<Self, IoError> {
        let path = path.as_ref().to_path_buf();
        validate_channels(&path, channels)?;
        if let Ok(by_extension) = Format::from_path(&path)
            && by_extension != format
        {
            return Err(IoError::FormatMismatch {
                path,
                requested: format,
                by_extension,
            });
        }
        if options.row_group_rows == 0 {
            return Err(IoError::InvalidChannels {
                path,
                message: "row_group_rows is 0; use at least 1 row per row group".into(),
            });
        }
        let doc = MetaDocument::new(channels, metadata);
        let file = File::create(&path).map_err(|e| IoError::io(&path, e))?;
        let backend = match format {
            Format::Csv => {
                let mut writer = csv::Writer::from_writer(BufWriter::new(file));
                let header =
                    std::iter::once(TIME_COLUMN).chain(channels.iter().map(|c| c.name.as_str()));
                writer
                    .write_record(header)
                    .map_err(|e| IoError::csv(&path, e))?;
                writer.flush().map_err(|e| IoError::io(&path, e))?;
                write_sidecar(&path, &doc)?;
                Backend::Csv(CsvBackend {
                    writer,
                    number: ryu::Buffer::new(),
                })
            }
            Format::Parquet => {
                let schema = parquet_schema(channels).map_err(|e| IoError::parquet(&path, e))?;
                let props = WriterProperties::builder()
                    .set_max_row_group_size(options.row_group_rows)
                    .set_created_by(format!("sprung-io {}", env!("CARGO_PKG_VERSION")))
                    .build();
                let writer = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props))
                    .map_err(|e| IoError::parquet(&path, e))?;
                let columns = (0..=channels.len())
                    .map(|_| Vec::with_capacity(options.row_group_rows))
                    .collect();
                Backend::Parquet(ParquetBackend {
                    writer,
                    columns,
                    row_group_rows: options.row_group_rows,
                })
            }
        };
        Ok(ResultWriter {
            path,
            format,
            doc,
            backend: Some(backend),
            rows: 0,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The channels (without `time`).
    pub fn channels(&self) -> &[Channel] {
        &self.doc.channels
    }

    /// Rows accepted so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Appends one row: time `t` in seconds and one value per channel.
    pub fn write_row(&mut self, t: f64, values: &[f64]) -> Result<(), IoError> {
        let n = self.doc.channels.len();
        if values.len() != n {
            return Err(IoError::RowLength {
                path: self.path.clone(),
                expected: n,
                got: values.len(),
            });
        }
        let path = &self.path;
        match self.backend.as_mut() {
            None => {
                return Err(IoError::Closed {
                    path: path.clone(),
                    message: "finish was already called".into(),
                });
            }
            Some(Backend::Csv(b)) => {
                b.writer
                    .write_field(b.number.format(t))
                    .map_err(|e| IoError::csv(path, e))?;
                for &v in values {
                    b.writer
                        .write_field(b.number.format(v))
                        .map_err(|e| IoError::csv(path, e))?;
                }
                b.writer
                    .write_record(None::<&[u8]>)
                    .map_err(|e| IoError::csv(path, e))?;
            }
            Some(Backend::Parquet(b)) => {
                b.columns[0].push(t);
                for (col, &v) in b.columns[1..].iter_mut().zip(values) {
                    col.push(v);
                }
                if b.columns[0].len() >= b.row_group_rows {
                    b.write_row_group().map_err(|e| IoError::parquet(path, e))?;
                }
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Appends `times.len()` rows stored row-major in `values` (`channels` values per row).
    pub fn write_rows(&mut self, times: &[f64], values: &[f64]) -> Result<(), IoError> {
        let n = self.doc.channels.len();
        if values.len() != times.len() * n {
            return Err(IoError::RowLength {
                path: self.path.clone(),
                expected: times.len() * n,
                got: values.len(),
            });
        }
        if n == 0 {
            for &t in times {
                self.write_row(t, &[])?;
            }
        } else {
            for (&t, row) in times.iter().zip(values.chunks_exact(n)) {
                self.write_row(t, row)?;
            }
        }
        Ok(())
    }

    /// Pushes buffered data to the operating system (CSV) or writes the pending rows as a row
    /// group (Parquet; the file only becomes readable after `finish`, which writes the footer).
    pub fn flush(&mut self) -> Result<(), IoError> {
        let path = &self.path;
        match self.backend.as_mut() {
            None => Ok(()),
            Some(Backend::Csv(b)) => b.writer.flush().map_err(|e| IoError::io(path, e)),
            Some(Backend::Parquet(b)) => b.write_row_group().map_err(|e| IoError::parquet(path, e)),
        }
    }

    /// Writes the remaining rows, records `stop_reason` and `extra_metadata` (merged into the
    /// run metadata; an object's entries are merged key by key) and closes the file.
    pub fn finish(
        mut self,
        stop_reason: &str,
        extra_metadata: Value,
    ) -> Result<WriteSummary, IoError> {
        self.finish_inner(stop_reason, extra_metadata)
    }

    fn finish_inner(
        &mut self,
        stop_reason: &str,
        extra_metadata: Value,
    ) -> Result<WriteSummary, IoError> {
        let Some(backend) = self.backend.take() else {
            return Err(IoError::Closed {
                path: self.path.clone(),
                message: "finish was already called".into(),
            });
        };
        merge_metadata(&mut self.doc.metadata, stop_reason, extra_metadata);
        self.doc.rows = self.rows;
        self.doc.complete = true;
        let path = &self.path;
        match backend {
            Backend::Csv(mut b) => {
                // Flushes the CSV buffer and the underlying `BufWriter` into the file.
                b.writer.flush().map_err(|e| IoError::io(path, e))?;
                drop(b);
                write_sidecar(path, &self.doc)?;
            }
            Backend::Parquet(mut b) => {
                b.write_row_group().map_err(|e| IoError::parquet(path, e))?;
                let json = serde_json::to_string(&self.doc).map_err(|e| IoError::json(path, e))?;
                b.writer
                    .append_key_value_metadata(KeyValue::new(PARQUET_META_KEY.to_string(), json));
                b.writer.append_key_value_metadata(KeyValue::new(
                    format!("{PARQUET_UNIT_PREFIX}{TIME_COLUMN}"),
                    TIME_UNIT.to_string(),
                ));
                for c in &self.doc.channels {
                    b.writer.append_key_value_metadata(KeyValue::new(
                        format!("{PARQUET_UNIT_PREFIX}{}", c.name),
                        c.unit.clone(),
                    ));
                }
                // Per-field metadata for Arrow-based readers (pyarrow/pandas, arrow-rs).
                let mut fields = vec![ArrowField {
                    name: TIME_COLUMN,
                    metadata: vec![("unit", TIME_UNIT)],
                }];
                for c in &self.doc.channels {
                    let mut metadata = vec![("unit", c.unit.as_str())];
                    if !c.description.is_empty() {
                        metadata.push(("description", c.description.as_str()));
                    }
                    fields.push(ArrowField {
                        name: &c.name,
                        metadata,
                    });
                }
                b.writer.append_key_value_metadata(KeyValue::new(
                    "ARROW:schema".to_string(),
                    base64(&schema_message(&fields)),
                ));
                b.writer.close().map_err(|e| IoError::parquet(path, e))?;
            }
        }
        Ok(WriteSummary {
            path: self.path.clone(),
            format: self.format,
            rows: self.rows,
            meta: self.doc.clone(),
        })
    }
}

impl Drop for ResultWriter {
    /// Best effort: an unfinished writer is finished with stop reason
    /// [`STOP_REASON_DROPPED`]; errors are ignored (there is nobody to report them to).
    fn drop(&mut self) {
        if self.backend.is_some() {
            let _ = self.finish_inner(STOP_REASON_DROPPED, Value::Null);
        }
    }
}

impl ParquetBackend {
    fn write_row_group(&mut self) -> Result<(), parquet::errors::ParquetError> {
        if self.columns[0].is_empty() {
            return Ok(());
        }
        let mut rg = self.writer.next_row_group()?;
        let mut k = 0;
        while let Some(mut col) = rg.next_column()? {
            col.typed::<DoubleType>()
                .write_batch(&self.columns[k], None, None)?;
            col.close()?;
            k += 1;
        }
        rg.close()?;
        for c in &mut self.columns {
            c.clear();
        }
        Ok(())
    }
}

fn parquet_schema(channels: &[Channel]) -> Result<Type, parquet::errors::ParquetError> {
    let names = std::iter::once(TIME_COLUMN).chain(channels.iter().map(|c| c.name.as_str()));
    let mut fields = Vec::with_capacity(channels.len() + 1);
    for name in names {
        fields.push(Arc::new(
            Type::primitive_type_builder(name, PhysicalType::DOUBLE)
                .with_repetition(Repetition::REQUIRED)
                .build()?,
        ));
    }
    Type::group_type_builder("sprung_results")
        .with_fields(fields)
        .build()
}

/// Writes a whole [`crate::ResultSet`] to `path` (format by extension), e.g. to convert a reference
/// CSV into Parquet. Units and descriptions are kept; `metadata` replaces the run metadata and
/// `stop_reason` is recorded as usual.
pub fn write_results(
    path: impl AsRef<Path>,
    set: &crate::reader::ResultSet,
    metadata: Value,
    stop_reason: &str,
) -> Result<WriteSummary, IoError> {
    let path = path.as_ref();
    let format = Format::from_path(path)?;
    let channels: Vec<Channel> = set
        .columns
        .iter()
        .map(|c| Channel::new(c.name.clone(), c.unit.clone(), c.description.clone()))
        .collect();
    for c in &set.columns {
        if c.values.len() != set.time.len() {
            return Err(IoError::InvalidChannels {
                path: path.to_path_buf(),
                message: format!(
                    "column '{}' has {} values for {} time points",
                    c.name,
                    c.values.len(),
                    set.time.len()
                ),
            });
        }
    }
    let mut w = ResultWriter::create(path, format, &channels, metadata)?;
    let mut row = vec![0.0; channels.len()];
    for (i, &t) in set.time.iter().enumerate() {
        for (v, c) in row.iter_mut().zip(&set.columns) {
            *v = c.values[i];
        }
        w.write_row(t, &row)?;
    }
    w.finish(stop_reason, Value::Null)
}

/// Merges the stop reason and extra metadata into the run metadata.
fn merge_metadata(meta: &mut Value, stop_reason: &str, extra: Value) {
    if !meta.is_object() {
        let old = std::mem::take(meta);
        let mut map = serde_json::Map::new();
        if !old.is_null() {
            map.insert("user".into(), old);
        }
        *meta = Value::Object(map);
    }
    let Value::Object(map) = meta else {
        return;
    };
    match extra {
        Value::Null => {}
        Value::Object(extra) => {
            for (k, v) in extra {
                map.insert(k, v);
            }
        }
        other => {
            map.insert("extra".into(), other);
        }
    }
    map.insert("stop_reason".into(), Value::String(stop_reason.to_string()));
}

/// Writes the sidecar atomically (temporary file + rename).
fn write_sidecar(path: &Path, doc: &MetaDocument) -> Result<(), IoError> {
    let side = sidecar_path(path);
    let mut tmp = side.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let json = serde_json::to_vec_pretty(doc).map_err(|e| IoError::json(&side, e))?;
    std::fs::write(&tmp, json).map_err(|e| IoError::io(&tmp, e))?;
    std::fs::rename(&tmp, &side).map_err(|e| IoError::io(&side, e))?;
    Ok(())
}
