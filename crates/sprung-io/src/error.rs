//! Error type of `sprung-io`.
//!
//! Every variant names the file (where one is involved) and says what went wrong and how to fix
//! it, following the project rule that user input never causes a panic.

use std::path::PathBuf;

/// Errors raised while writing, reading, comparing or plotting simulation results.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// An operating-system level I/O error on a file.
    #[error("I/O error on '{path}': {cause}")]
    Io {
        /// File that was being accessed.
        path: PathBuf,
        /// Underlying error. Part of the message, deliberately not `Error::source()`: a chain
        /// printer (anyhow's `{:#}`) would otherwise show it twice.
        cause: std::io::Error,
    },
    /// The file extension does not select a supported result format.
    #[error(
        "cannot determine the result format of '{path}': use the extension .csv or .parquet \
         (or pass the format explicitly)"
    )]
    UnknownFormat {
        /// Offending path.
        path: PathBuf,
    },
    /// The requested format contradicts the file extension (the reader picks the format by
    /// extension, so such a file could not be read back).
    #[error(
        "'{path}' has the extension of the {by_extension:?} format but {requested:?} was requested; \
         change the extension or the format"
    )]
    FormatMismatch {
        /// Offending path.
        path: PathBuf,
        /// Format requested by the caller.
        requested: crate::channel::Format,
        /// Format implied by the extension.
        by_extension: crate::channel::Format,
    },
    /// The channel list given to a writer is invalid.
    #[error("invalid channel list for '{path}': {message}")]
    InvalidChannels {
        /// File the writer was created for.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A row did not match the channel list.
    #[error(
        "row for '{path}' has {got} values but the file has {expected} channels; pass exactly one \
         value per channel (time is passed separately)"
    )]
    RowLength {
        /// File being written.
        path: PathBuf,
        /// Number of channels of the file.
        expected: usize,
        /// Number of values passed.
        got: usize,
    },
    /// The writer was used after `finish` or after an earlier failure.
    #[error("result writer for '{path}' is closed: {message}")]
    Closed {
        /// File being written.
        path: PathBuf,
        /// Why it is closed.
        message: String,
    },
    /// The background writer thread failed; the message carries the original error.
    #[error("background result writer for '{path}' failed: {message}")]
    WriterThread {
        /// File being written.
        path: PathBuf,
        /// Original error text.
        message: String,
    },
    /// CSV encoding or decoding error.
    #[error("CSV error in '{path}': {cause}")]
    Csv {
        /// File being accessed.
        path: PathBuf,
        /// Underlying error. Part of the message, deliberately not `Error::source()`: a chain
        /// printer (anyhow's `{:#}`) would otherwise show it twice.
        cause: csv::Error,
    },
    /// Parquet encoding or decoding error.
    #[error("Parquet error in '{path}': {cause}")]
    Parquet {
        /// File being accessed.
        path: PathBuf,
        /// Underlying error. Part of the message, deliberately not `Error::source()`: a chain
        /// printer (anyhow's `{:#}`) would otherwise show it twice.
        cause: parquet::errors::ParquetError,
    },
    /// JSON encoding or decoding error (sidecar / embedded metadata).
    #[error("JSON metadata error in '{path}': {cause}")]
    Json {
        /// File being accessed.
        path: PathBuf,
        /// Underlying error. Part of the message, deliberately not `Error::source()`: a chain
        /// printer (anyhow's `{:#}`) would otherwise show it twice.
        cause: serde_json::Error,
    },
    /// The content of a result file is not what `sprung-io` expects.
    #[error("malformed result file '{path}': {message}")]
    Malformed {
        /// File being read.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A comparison of result channels could not be carried out.
    #[error("{0}")]
    Metrics(#[from] crate::metrics::MetricsError),
    /// A result name (`--name`) is not a usable file name.
    #[error("{message}")]
    InvalidName {
        /// What is wrong and what to do.
        message: String,
    },
    /// A result folder cannot be used (invalid name, in use by another run, ...).
    #[error("result folder '{path}': {message}")]
    Folder {
        /// Folder (or the rejected name).
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// Plotting failed.
    #[error("cannot plot '{path}': {message}")]
    Plot {
        /// Output file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl IoError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        IoError::Io {
            path: path.into(),
            cause: source,
        }
    }
    pub(crate) fn parquet(path: impl Into<PathBuf>, source: parquet::errors::ParquetError) -> Self {
        IoError::Parquet {
            path: path.into(),
            cause: source,
        }
    }
    pub(crate) fn csv(path: impl Into<PathBuf>, source: csv::Error) -> Self {
        IoError::Csv {
            path: path.into(),
            cause: source,
        }
    }
    pub(crate) fn json(path: impl Into<PathBuf>, source: serde_json::Error) -> Self {
        IoError::Json {
            path: path.into(),
            cause: source,
        }
    }
    pub(crate) fn malformed(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        IoError::Malformed {
            path: path.into(),
            message: message.into(),
        }
    }
}
