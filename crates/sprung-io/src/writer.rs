//! Result file writers (CSV with JSON sidecar, Parquet) behind one interface.
//!
//! * CSV: a header row with the plain column names (`time`, then the channel names) and one row
//!   per output time, every value printed as the shortest decimal string that parses back to
//!   the identical `f64` (ryu). Units, descriptions and run metadata go to the sidecar
//!   `<path>.meta.json` ([`crate::MetaDocument`]); the sidecar is written at creation (so a crashed
//!   run still documents its channels) and rewritten at `finish`. Rows are formatted into memory
//!   and handed to the operating system only as whole rows (at `flush`, or when about 1 MiB is
//!   pending), so a process killed at any moment leaves whole rows; only an interrupted system
//!   call (SIGKILL during the write, disk full) can leave a partial last line, which the reader
//!   drops with a warning (it has no line end).
//! * Parquet: one required `DOUBLE` column per channel, `time` first, no compression. Rows are
//!   collected into row groups of [`WriterOptions::row_group_rows`] rows in `<path>.partial`;
//!   `finish` (or `Drop`) writes the last partial row group and the footer and renames the file
//!   to `<path>`, so a run that is stopped early still gives a valid file. Because a Parquet file
//!   is unreadable until its footer is written, every `flush` additionally writes the rows since
//!   the previous flush as a complete Parquet file `<path>.parts/part-NNNNNN.parquet` (written
//!   under a hidden temporary name and renamed, so a part is either complete or absent). After a
//!   SIGKILL or a full disk the folder `<path>.parts` holds every flushed row: the reader of this
//!   crate reads it when `<path>` is missing, and pyarrow/pandas read it as a dataset
//!   (`pd.read_parquet("results.parquet.parts")`). `finish` removes the parts once `<path>`
//!   is in place. The metadata document is stored as key-value file metadata under
//!   [`crate::PARQUET_META_KEY`], and each unit under `sprung.unit.<column>`. In addition an
//!   Arrow schema (`ARROW:schema`) gives every field the metadata `unit` (and `description`), so
//!   Arrow-based readers such as pyarrow show the units as field metadata.
//!
//! The per-row path of this writer performs I/O; for the real-time stepping loop use
//! [`crate::BackgroundWriter`], which moves the I/O to a separate thread.

use std::fs::File;
use std::io::Write;
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

/// Pending CSV bytes (whole rows) above which a write to the file happens without a flush.
const CSV_SPILL_BYTES: usize = 1 << 20;

struct CsvBackend {
    file: File,
    /// Formatted whole rows not yet handed to the operating system (ryu numbers never need
    /// CSV quoting).
    buf: Vec<u8>,
    number: ryu::Buffer,
}

struct ParquetBackend {
    writer: SerializedFileWriter<File>,
    /// Pending row group, column-major; `columns[0]` is time.
    columns: Vec<Vec<f64>>,
    row_group_rows: usize,
    /// Rows since the last flush (column-major), written as the next part file.
    part: Vec<Vec<f64>>,
    /// Folder of the part files (None: writing to a device or pipe, no parts).
    parts_dir: Option<PathBuf>,
    /// Number of part files written.
    parts: u32,
    /// The file being written, renamed to the result path by `finish` (None: written directly).
    partial: Option<PathBuf>,
    schema: Arc<Type>,
}

enum Backend {
    Csv(CsvBackend),
    Parquet(Box<ParquetBackend>),
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
        let backend = match format {
            Format::Csv => {
                let mut file = File::create(&path).map_err(|e| IoError::io(&path, e))?;
                let mut writer = csv::Writer::from_writer(Vec::new());
                let header =
                    std::iter::once(TIME_COLUMN).chain(channels.iter().map(|c| c.name.as_str()));
                writer
                    .write_record(header)
                    .map_err(|e| IoError::csv(&path, e))?;
                let header = writer
                    .into_inner()
                    .map_err(|e| IoError::io(&path, e.into_error()))?;
                file.write_all(&header).map_err(|e| IoError::io(&path, e))?;
                write_sidecar(&path, &doc)?;
                Backend::Csv(CsvBackend {
                    file,
                    buf: Vec::with_capacity(64 * 1024),
                    number: ryu::Buffer::new(),
                })
            }
            Format::Parquet => {
                let schema =
                    Arc::new(parquet_schema(channels).map_err(|e| IoError::parquet(&path, e))?);
                // A device or pipe (e.g. /dev/null) is written directly: no part files, no
                // rename. Otherwise leftovers of an earlier run into the same path would be read
                // as this run's, so they are removed (regular files only).
                let special = std::fs::metadata(&path).is_ok_and(|m| !m.is_file());
                let (parts_dir, partial) = if special {
                    (None, None)
                } else {
                    let parts_dir = parts_dir_of(&path);
                    remove_regular_file(&path)?;
                    remove_regular_file(&sidecar_path(&path))?;
                    if std::fs::symlink_metadata(&parts_dir).is_ok_and(|m| m.is_dir()) {
                        std::fs::remove_dir_all(&parts_dir)
                            .map_err(|e| IoError::io(&parts_dir, e))?;
                    }
                    std::fs::create_dir_all(&parts_dir).map_err(|e| IoError::io(&parts_dir, e))?;
                    (Some(parts_dir), Some(partial_path_of(&path)))
                };
                let target = partial.as_deref().unwrap_or(&path);
                let file = File::create(target).map_err(|e| IoError::io(target, e))?;
                let writer = SerializedFileWriter::new(
                    file,
                    schema.clone(),
                    Arc::new(parquet_props(options.row_group_rows)),
                )
                .map_err(|e| IoError::parquet(&path, e))?;
                let columns = (0..=channels.len())
                    .map(|_| Vec::with_capacity(options.row_group_rows))
                    .collect();
                let part = (0..=channels.len()).map(|_| Vec::new()).collect();
                Backend::Parquet(Box::new(ParquetBackend {
                    writer,
                    columns,
                    row_group_rows: options.row_group_rows,
                    part,
                    parts_dir,
                    parts: 0,
                    partial,
                    schema,
                }))
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
                b.buf.extend_from_slice(b.number.format(t).as_bytes());
                for &v in values {
                    b.buf.push(b',');
                    b.buf.extend_from_slice(b.number.format(v).as_bytes());
                }
                b.buf.push(b'\n');
                if b.buf.len() >= CSV_SPILL_BYTES {
                    b.spill().map_err(|e| IoError::io(path, e))?;
                }
            }
            Some(Backend::Parquet(b)) => {
                b.columns[0].push(t);
                b.part[0].push(t);
                for (col, &v) in b.columns[1..].iter_mut().zip(values) {
                    col.push(v);
                }
                for (col, &v) in b.part[1..].iter_mut().zip(values) {
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

    /// Makes every row written so far readable after a crash: hands the pending whole rows to
    /// the operating system (CSV) or writes the rows since the previous flush as the next part
    /// file `<path>.parts/part-NNNNNN.parquet` (Parquet; see the module documentation).
    pub fn flush(&mut self) -> Result<(), IoError> {
        let path = &self.path;
        match self.backend.as_mut() {
            None => Ok(()),
            Some(Backend::Csv(b)) => b.spill().map_err(|e| IoError::io(path, e)),
            Some(Backend::Parquet(b)) => b.write_part(&self.doc, self.rows),
        }
    }

    /// Records that writing failed (e.g. disk full) and abandons the file: no further byte is
    /// written (so a partly written row is never followed by more data; CSV and Parquet parts
    /// keep every row flushed before). The reason goes into the metadata (`stop_reason`,
    /// `write_error`; `complete` stays `false`): the CSV sidecar, or for Parquet the sidecar
    /// `<path>.meta.json` next to `<path>.parts`, which the reader prefers over the parts'
    /// own metadata. Best effort: on a full disk this small file may fail as well, which is
    /// returned.
    pub fn record_failure(&mut self, message: &str) -> Result<(), IoError> {
        self.backend = None;
        merge_metadata(
            &mut self.doc.metadata,
            &format!("writing results failed: {message}"),
            serde_json::json!({ "write_error": message }),
        );
        self.doc.rows = self.rows;
        if std::fs::metadata(&self.path).is_ok_and(|m| !m.is_file()) {
            // A device or pipe has no place for a sidecar.
            return Ok(());
        }
        write_sidecar(&self.path, &self.doc)
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
                b.spill().map_err(|e| IoError::io(path, e))?;
                drop(b);
                write_sidecar(path, &self.doc)?;
            }
            Backend::Parquet(mut b) => {
                b.write_row_group().map_err(|e| IoError::parquet(path, e))?;
                append_metadata(&mut b.writer, &self.doc, path)?;
                b.writer.close().map_err(|e| IoError::parquet(path, e))?;
                if let (Some(partial), Some(parts_dir)) = (&b.partial, &b.parts_dir) {
                    std::fs::rename(partial, path).map_err(|e| IoError::io(path, e))?;
                    // The complete file is in place; the parts (and a failure sidecar) are
                    // obsolete.
                    let _ = std::fs::remove_dir_all(parts_dir);
                    let _ = remove_regular_file(&sidecar_path(path));
                }
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

impl CsvBackend {
    /// Writes the pending whole rows to the file.
    fn spill(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            let r = self.file.write_all(&self.buf);
            self.buf.clear();
            r?;
        }
        Ok(())
    }
}

impl ParquetBackend {
    /// Writes the rows since the previous flush as the next complete part file.
    fn write_part(&mut self, doc: &MetaDocument, rows: u64) -> Result<(), IoError> {
        let Some(parts_dir) = &self.parts_dir else {
            for c in &mut self.part {
                c.clear();
            }
            return Ok(());
        };
        if self.part[0].is_empty() {
            return Ok(());
        }
        let name = format!("part-{:06}.parquet", self.parts);
        let final_path = parts_dir.join(&name);
        let tmp = parts_dir.join(format!(".{name}.tmp"));
        let mut doc = doc.clone();
        doc.rows = rows;
        let result = (|| -> Result<(), IoError> {
            let file = File::create(&tmp).map_err(|e| IoError::io(&tmp, e))?;
            let mut w = SerializedFileWriter::new(
                file,
                self.schema.clone(),
                Arc::new(parquet_props(self.part[0].len().max(1))),
            )
            .map_err(|e| IoError::parquet(&tmp, e))?;
            let mut rg = w.next_row_group().map_err(|e| IoError::parquet(&tmp, e))?;
            let mut k = 0;
            while let Some(mut col) = rg.next_column().map_err(|e| IoError::parquet(&tmp, e))? {
                col.typed::<DoubleType>()
                    .write_batch(&self.part[k], None, None)
                    .map_err(|e| IoError::parquet(&tmp, e))?;
                col.close().map_err(|e| IoError::parquet(&tmp, e))?;
                k += 1;
            }
            rg.close().map_err(|e| IoError::parquet(&tmp, e))?;
            append_metadata(&mut w, &doc, &tmp)?;
            w.close().map_err(|e| IoError::parquet(&tmp, e))?;
            std::fs::rename(&tmp, &final_path).map_err(|e| IoError::io(&final_path, e))
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result?;
        self.parts += 1;
        for c in &mut self.part {
            c.clear();
        }
        Ok(())
    }

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

fn parquet_props(row_group_rows: usize) -> WriterProperties {
    WriterProperties::builder()
        .set_max_row_group_size(row_group_rows)
        .set_created_by(format!("sprung-io {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Stores the metadata document, the units and the Arrow schema (field metadata `unit`,
/// `description`) as key-value metadata of a Parquet file.
fn append_metadata(
    w: &mut SerializedFileWriter<File>,
    doc: &MetaDocument,
    path: &Path,
) -> Result<(), IoError> {
    let json = serde_json::to_string(doc).map_err(|e| IoError::json(path, e))?;
    w.append_key_value_metadata(KeyValue::new(PARQUET_META_KEY.to_string(), json));
    w.append_key_value_metadata(KeyValue::new(
        format!("{PARQUET_UNIT_PREFIX}{TIME_COLUMN}"),
        TIME_UNIT.to_string(),
    ));
    for c in &doc.channels {
        w.append_key_value_metadata(KeyValue::new(
            format!("{PARQUET_UNIT_PREFIX}{}", c.name),
            c.unit.clone(),
        ));
    }
    // Per-field metadata for Arrow-based readers (pyarrow/pandas, arrow-rs).
    let mut fields = vec![ArrowField {
        name: TIME_COLUMN,
        metadata: vec![("unit", TIME_UNIT)],
    }];
    for c in &doc.channels {
        let mut metadata = vec![("unit", c.unit.as_str())];
        if !c.description.is_empty() {
            metadata.push(("description", c.description.as_str()));
        }
        fields.push(ArrowField {
            name: &c.name,
            metadata,
        });
    }
    w.append_key_value_metadata(KeyValue::new(
        "ARROW:schema".to_string(),
        base64(&schema_message(&fields)),
    ));
    Ok(())
}

/// Folder of the crash-safe part files of a Parquet result `<path>`: `<path>.parts`.
pub fn parts_dir_of(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".parts");
    PathBuf::from(s)
}

/// The Parquet file while it is written: `<path>.partial` (renamed to `<path>` by `finish`).
fn partial_path_of(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".partial");
    PathBuf::from(s)
}

/// Removes `path` if it is a regular file (never a device, pipe, folder or symlink target).
fn remove_regular_file(path: &Path) -> Result<(), IoError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => std::fs::remove_file(path).map_err(|e| IoError::io(path, e)),
        _ => Ok(()),
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
