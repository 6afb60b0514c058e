//! Channels, result formats and the JSON metadata document shared by both file formats.
//!
//! A result set is a `time` column in seconds plus any number of `f64` channels, each with a
//! name, a unit and a description (for instance the longitudinal wheel-centre displacement and
//! bushing force of document 000, section 5.2, Bild 7).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::IoError;

/// Name of the time column in every result file.
pub const TIME_COLUMN: &str = "time";
/// Unit of the time column.
pub const TIME_UNIT: &str = "s";
/// Value of the `format` field of the metadata document.
pub const FORMAT_TAG: &str = "sprung-results";
/// Version of the metadata document layout.
pub const FORMAT_VERSION: u32 = 1;
/// Key of the Parquet key-value file metadata entry holding the metadata document.
pub const PARQUET_META_KEY: &str = "sprung.meta";
/// Prefix of the per-column Parquet key-value entries holding units (`sprung.unit.<column>`).
pub const PARQUET_UNIT_PREFIX: &str = "sprung.unit.";

/// One output channel (a column of the result file besides `time`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Channel {
    /// Column name, unique within a file, not `time`.
    pub name: String,
    /// Physical unit, e.g. `m` or `N`.
    pub unit: String,
    /// Free-text description.
    #[serde(default)]
    pub description: String,
}

impl Channel {
    /// Creates a channel from name, unit and description.
    pub fn new(
        name: impl Into<String>,
        unit: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Channel {
            name: name.into(),
            unit: unit.into(),
            description: description.into(),
        }
    }
}

/// File format of a result file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Comma-separated values plus a `<path>.meta.json` sidecar.
    Csv,
    /// Apache Parquet with the metadata embedded as key-value file metadata.
    Parquet,
}

impl Format {
    /// Selects the format from the file extension (`.csv` or `.parquet`/`.pq`, case-insensitive).
    pub fn from_path(path: &Path) -> Result<Format, IoError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        match ext.as_deref() {
            Some("csv") => Ok(Format::Csv),
            Some("parquet") | Some("pq") => Ok(Format::Parquet),
            _ => Err(IoError::UnknownFormat {
                path: path.to_path_buf(),
            }),
        }
    }
}

/// Path of the JSON sidecar written next to a CSV result file: `<path>.meta.json`.
pub fn sidecar_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".meta.json");
    PathBuf::from(s)
}

/// Description of the time column inside the metadata document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeColumn {
    /// Column name (always `time`).
    pub name: String,
    /// Unit (always `s`).
    pub unit: String,
}

/// The metadata document stored in the CSV sidecar and in the Parquet file metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaDocument {
    /// Always [`FORMAT_TAG`].
    pub format: String,
    /// Layout version, [`FORMAT_VERSION`].
    pub version: u32,
    /// The time column.
    pub time: TimeColumn,
    /// Channels in column order (after `time`).
    pub channels: Vec<Channel>,
    /// Number of rows written (final value at `finish`).
    pub rows: u64,
    /// `true` once the writer finished (the stop reason is then in `metadata.stop_reason`).
    pub complete: bool,
    /// User metadata: model, solver, statistics, `stop_reason`, ...
    pub metadata: serde_json::Value,
}

impl MetaDocument {
    pub(crate) fn new(channels: &[Channel], metadata: serde_json::Value) -> Self {
        MetaDocument {
            format: FORMAT_TAG.to_string(),
            version: FORMAT_VERSION,
            time: TimeColumn {
                name: TIME_COLUMN.to_string(),
                unit: TIME_UNIT.to_string(),
            },
            channels: channels.to_vec(),
            rows: 0,
            complete: false,
            metadata,
        }
    }
}

/// Checks that channel names are non-empty, unique and different from `time`.
pub(crate) fn validate_channels(path: &Path, channels: &[Channel]) -> Result<(), IoError> {
    let err = |message: String| IoError::InvalidChannels {
        path: path.to_path_buf(),
        message,
    };
    for (i, c) in channels.iter().enumerate() {
        if c.name.trim().is_empty() {
            return Err(err(format!(
                "channel #{i} has an empty name; give every channel a name"
            )));
        }
        if c.name == TIME_COLUMN {
            return Err(err(format!(
                "channel #{i} is called '{TIME_COLUMN}', which is reserved for the time column; rename it"
            )));
        }
        if channels[..i].iter().any(|o| o.name == c.name) {
            return Err(err(format!(
                "channel name '{}' occurs more than once; channel names must be unique",
                c.name
            )));
        }
    }
    Ok(())
}
