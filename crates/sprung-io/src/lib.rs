//! `sprung-io`: simulation results — writing (CSV, Parquet, background writer thread),
//! reading, accuracy metrics and time-series plots.
//!
//! The metrics follow document 000 (engine paper), section 5.2, Table 3 ("auf den Mittelwert
//! normierte mittlere Fehlerquadrate"): errors of a result against a reference solution over the
//! time window shown in Bild 7, normalised with the mean of the reference. The plots reproduce
//! the layout of Bild 7 (longitudinal wheel displacement and bushing force, two axles, LSRT2
//! versus reference).

#![warn(missing_docs)]

mod arrow_schema;
mod background;
mod channel;
mod error;
pub mod metrics;
pub mod path_plot;
pub mod plot;
mod plot_common;
mod reader;
pub mod result_folder;
pub mod step_response;
mod writer;
pub mod xy_plot;

pub use background::{
    BackgroundOptions, BackgroundStats, BackgroundWriter, FLUSH_INTERVAL, RowBuffer,
};
pub use channel::{
    Channel, FORMAT_TAG, FORMAT_VERSION, Format, MetaDocument, PARQUET_META_KEY,
    PARQUET_UNIT_PREFIX, TIME_COLUMN, TIME_UNIT, TimeColumn, sidecar_path,
};
pub use error::IoError;
pub use metrics::{ChannelError, MetricsError, Window, compare, format_comparison_table};
pub use plot::{Layout, LineStyle, Panel, PlotOptions, Series, plot_time_series};
pub use reader::{Column, ResultSet, read_results};
pub use result_folder::{LOCK_FILE_NAME, ResultFolder, validate_result_name};
pub use step_response::{Adjustment, StepOptions, StepResponse, step_response, subtract_datum};
pub use writer::{
    ResultWriter, STOP_REASON_DROPPED, WriteSummary, WriterOptions, parts_dir_of, write_results,
};
