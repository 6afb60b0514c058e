//! Non-blocking result output for the real-time stepping loop.
//!
//! The simulation thread fills preallocated [`RowBuffer`]s (N rows × channels) with
//! [`BackgroundWriter::push_row`]; a full buffer is handed to a writer thread through a bounded
//! `std::sync::mpsc::sync_channel` and a fresh buffer is taken from a return channel. All
//! buffers are allocated up front and recycled, and both channels are bounded (array-backed), so
//! in steady state `push_row` neither allocates nor performs I/O nor takes a lock; it copies
//! `1 + channels` numbers and, once every N rows, moves a buffer between channels.
//!
//! If the writer thread falls behind and no free buffer is left, `push_row` waits (spinning with
//! `yield_now`, then short sleeps) until one comes back; such waits are counted in
//! [`BackgroundStats::stalls`]. More or larger buffers remove stalls at the cost of memory.
//!
//! Rows reach the file at least every [`FLUSH_INTERVAL`] of wall time: the writer thread raises
//! a flag when the interval has passed, and the next `push_row` (one relaxed atomic load per
//! row) hands over its partly filled buffer and asks for a [`ResultWriter::flush`], which makes
//! the rows readable after a crash (whole CSV rows; a Parquet part file). The writer thread
//! also flushes after a full buffer once the interval has passed.
//!
//! Errors of the writer thread (disk full, ...) are recorded in the metadata
//! ([`ResultWriter::record_failure`]) when they happen and reported by the next `push_row`, `flush`
//! or `finish` as [`IoError::WriterThread`] naming the file. Dropping the writer without
//! `finish` finishes the file (best effort) with stop reason [`crate::STOP_REASON_DROPPED`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest wall time between two flushes of a [`BackgroundWriter`] while rows arrive.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(500);

use serde_json::Value;

use crate::channel::{Channel, Format};
use crate::error::IoError;
use crate::writer::{ResultWriter, STOP_REASON_DROPPED, WriteSummary, WriterOptions};

/// A preallocated block of rows: `capacity` rows of `time` plus `channels` values, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct RowBuffer {
    times: Vec<f64>,
    values: Vec<f64>,
    channels: usize,
    capacity: usize,
}

impl RowBuffer {
    /// Allocates a buffer for `capacity` rows (at least 1) of `channels` values.
    pub fn new(capacity: usize, channels: usize) -> Self {
        let capacity = capacity.max(1);
        RowBuffer {
            times: Vec::with_capacity(capacity),
            values: Vec::with_capacity(capacity * channels),
            channels,
            capacity,
        }
    }

    /// Appends a row without allocating. Returns `false` (and stores nothing) if the buffer is
    /// full or `values.len()` differs from the channel count.
    pub fn push_row(&mut self, t: f64, values: &[f64]) -> bool {
        if self.is_full() || values.len() != self.channels {
            return false;
        }
        self.times.push(t);
        self.values.extend_from_slice(values);
        true
    }

    /// Rows stored.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// `true` if no rows are stored.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// `true` if `capacity` rows are stored.
    pub fn is_full(&self) -> bool {
        self.times.len() >= self.capacity
    }

    /// Maximum number of rows.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of channels per row (without time).
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Stored times.
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// Stored channel values, row-major (`channels` values per row).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Removes all rows, keeping the allocation.
    pub fn clear(&mut self) {
        self.times.clear();
        self.values.clear();
    }
}

/// Options of a [`BackgroundWriter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackgroundOptions {
    /// Rows per buffer (at least 1).
    pub rows_per_buffer: usize,
    /// Number of buffers in circulation (at least 2).
    pub buffers: usize,
    /// Options of the underlying file writer.
    pub writer: WriterOptions,
}

impl Default for BackgroundOptions {
    fn default() -> Self {
        BackgroundOptions {
            rows_per_buffer: 1024,
            buffers: 8,
            writer: WriterOptions::default(),
        }
    }
}

/// Counters of a [`BackgroundWriter`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BackgroundStats {
    /// Rows accepted by `push_row`.
    pub rows: u64,
    /// Buffers handed to the writer thread.
    pub buffers_sent: u64,
    /// Times `push_row` had to wait for a free buffer.
    pub stalls: u64,
}

enum Msg {
    Rows(RowBuffer),
    Flush,
    Finish { stop_reason: String, extra: Value },
}

/// Writes results on a background thread; see the module documentation.
pub struct BackgroundWriter {
    path: PathBuf,
    channels: usize,
    current: Option<RowBuffer>,
    tx: SyncSender<Msg>,
    free_rx: Receiver<RowBuffer>,
    failed: Arc<AtomicBool>,
    flush_wanted: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<WriteSummary, IoError>>>,
    error: Option<String>,
    stats: BackgroundStats,
}

impl std::fmt::Debug for BackgroundWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundWriter")
            .field("path", &self.path)
            .field("channels", &self.channels)
            .field("stats", &self.stats)
            .field("error", &self.error)
            .finish()
    }
}

impl BackgroundWriter {
    /// Creates the result file (errors such as an unwritable path are reported here) and
    /// starts the writer thread.
    pub fn create(
        path: impl AsRef<Path>,
        format: Format,
        channels: &[Channel],
        metadata: Value,
        options: BackgroundOptions,
    ) -> Result<Self, IoError> {
        let writer =
            ResultWriter::create_with_options(path, format, channels, metadata, options.writer)?;
        Self::from_writer(writer, options)
    }

    /// Moves an existing [`ResultWriter`] to a writer thread.
    pub fn from_writer(writer: ResultWriter, options: BackgroundOptions) -> Result<Self, IoError> {
        let path = writer.path().to_path_buf();
        let channels = writer.channels().len();
        let buffers = options.buffers.max(2);
        // Both channels can hold every buffer at once, so `send` never blocks.
        let (tx, rx) = sync_channel::<Msg>(buffers + 2);
        let (free_tx, free_rx) = sync_channel::<RowBuffer>(buffers);
        for _ in 1..buffers {
            free_tx
                .send(RowBuffer::new(options.rows_per_buffer, channels))
                .map_err(|_| IoError::Closed {
                    path: path.clone(),
                    message: "internal buffer channel closed during setup".into(),
                })?;
        }
        let current = Some(RowBuffer::new(options.rows_per_buffer, channels));
        let failed = Arc::new(AtomicBool::new(false));
        let failed_thread = Arc::clone(&failed);
        let flush_wanted = Arc::new(AtomicBool::new(false));
        let flush_thread = Arc::clone(&flush_wanted);
        let handle = std::thread::Builder::new()
            .name("sprung-io-writer".into())
            .spawn(move || writer_thread(writer, rx, free_tx, failed_thread, flush_thread))
            .map_err(|e| IoError::io(&path, e))?;
        Ok(BackgroundWriter {
            path,
            channels,
            current,
            tx,
            free_rx,
            failed,
            flush_wanted,
            handle: Some(handle),
            error: None,
            stats: BackgroundStats::default(),
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Counters (rows, buffers sent, stalls).
    pub fn stats(&self) -> BackgroundStats {
        self.stats
    }

    /// Appends a row (time in s, one value per channel). Does not allocate, lock or do I/O in
    /// steady state; see the module documentation.
    pub fn push_row(&mut self, t: f64, values: &[f64]) -> Result<(), IoError> {
        if values.len() != self.channels {
            return Err(IoError::RowLength {
                path: self.path.clone(),
                expected: self.channels,
                got: values.len(),
            });
        }
        if self.failed.load(Ordering::Acquire) || self.error.is_some() {
            return Err(self.thread_error());
        }
        let Some(buf) = self.current.as_mut() else {
            return Err(self.thread_error());
        };
        buf.push_row(t, values);
        self.stats.rows += 1;
        if buf.is_full() {
            self.hand_off()?;
            self.take_free_buffer()?;
        } else if self.flush_wanted.load(Ordering::Relaxed) {
            self.flush_wanted.store(false, Ordering::Relaxed);
            self.flush()?;
        }
        Ok(())
    }

    /// Hands the partially filled buffer to the writer thread and asks it to flush the file.
    /// Waits for a free buffer like `push_row`.
    pub fn flush(&mut self) -> Result<(), IoError> {
        if self.failed.load(Ordering::Acquire) || self.error.is_some() {
            return Err(self.thread_error());
        }
        if self.current.as_ref().is_some_and(|b| !b.is_empty()) {
            self.hand_off()?;
            self.take_free_buffer()?;
        }
        if self.tx.send(Msg::Flush).is_err() {
            return Err(self.thread_error());
        }
        Ok(())
    }

    /// Writes all remaining rows, records `stop_reason` and `extra_metadata`, closes the file
    /// and stops the writer thread.
    pub fn finish(
        mut self,
        stop_reason: &str,
        extra_metadata: Value,
    ) -> Result<WriteSummary, IoError> {
        self.finish_inner(stop_reason, extra_metadata)
    }

    fn finish_inner(&mut self, stop_reason: &str, extra: Value) -> Result<WriteSummary, IoError> {
        if let Some(msg) = &self.error {
            return Err(IoError::WriterThread {
                path: self.path.clone(),
                message: msg.clone(),
            });
        }
        let Some(handle) = self.handle.take() else {
            return Err(IoError::Closed {
                path: self.path.clone(),
                message: "finish was already called".into(),
            });
        };
        if let Some(buf) = self.current.take()
            && !buf.is_empty()
        {
            let _ = self.tx.send(Msg::Rows(buf));
        }
        let _ = self.tx.send(Msg::Finish {
            stop_reason: stop_reason.to_string(),
            extra,
        });
        match handle.join() {
            Ok(Ok(summary)) => Ok(summary),
            Ok(Err(e)) => {
                let message = e.to_string();
                self.error = Some(message.clone());
                Err(IoError::WriterThread {
                    path: self.path.clone(),
                    message,
                })
            }
            Err(_) => {
                let message = "the writer thread panicked".to_string();
                self.error = Some(message.clone());
                Err(IoError::WriterThread {
                    path: self.path.clone(),
                    message,
                })
            }
        }
    }

    fn hand_off(&mut self) -> Result<(), IoError> {
        if let Some(buf) = self.current.take() {
            self.stats.buffers_sent += 1;
            if self.tx.send(Msg::Rows(buf)).is_err() {
                return Err(self.thread_error());
            }
        }
        Ok(())
    }

    fn take_free_buffer(&mut self) -> Result<(), IoError> {
        let mut spins = 0u32;
        loop {
            match self.free_rx.try_recv() {
                Ok(buf) => {
                    if spins > 0 {
                        self.stats.stalls += 1;
                    }
                    self.current = Some(buf);
                    return Ok(());
                }
                Err(TryRecvError::Disconnected) => return Err(self.thread_error()),
                Err(TryRecvError::Empty) => {
                    if self.failed.load(Ordering::Acquire) {
                        return Err(self.thread_error());
                    }
                    spins += 1;
                    if spins < 64 {
                        std::thread::yield_now();
                    } else {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                }
            }
        }
    }

    /// Collects the error of a failed writer thread (joining it) and returns it.
    fn thread_error(&mut self) -> IoError {
        if self.error.is_none() {
            let message = match self.handle.take().map(|h| h.join()) {
                Some(Ok(Err(e))) => e.to_string(),
                Some(Ok(Ok(_))) => "the writer thread stopped unexpectedly".to_string(),
                Some(Err(_)) => "the writer thread panicked".to_string(),
                None => "the writer is already finished".to_string(),
            };
            self.error = Some(message);
        }
        IoError::WriterThread {
            path: self.path.clone(),
            message: self.error.clone().unwrap_or_default(),
        }
    }
}

impl Drop for BackgroundWriter {
    /// Best effort: flushes the remaining rows and finishes the file with stop reason
    /// [`STOP_REASON_DROPPED`].
    fn drop(&mut self) {
        if self.handle.is_some() && self.error.is_none() {
            let _ = self.finish_inner(STOP_REASON_DROPPED, Value::Null);
        }
    }
}

fn writer_thread(
    mut writer: ResultWriter,
    rx: Receiver<Msg>,
    free_tx: SyncSender<RowBuffer>,
    failed: Arc<AtomicBool>,
    flush_wanted: Arc<AtomicBool>,
) -> Result<WriteSummary, IoError> {
    let mut last_flush = Instant::now();
    loop {
        let wait = FLUSH_INTERVAL.saturating_sub(last_flush.elapsed());
        let step = match rx.recv_timeout(wait.max(Duration::from_millis(1))) {
            Err(RecvTimeoutError::Timeout) => {
                // Rows may be waiting in the producer's buffer: ask it to hand them over.
                flush_wanted.store(true, Ordering::Relaxed);
                last_flush = Instant::now();
                Ok(())
            }
            Ok(Msg::Rows(mut buf)) => {
                let mut r = writer.write_rows(buf.times(), buf.values());
                buf.clear();
                // The return channel can hold every buffer; a failure means the producer is gone.
                let _ = free_tx.try_send(buf);
                if r.is_ok() && last_flush.elapsed() >= FLUSH_INTERVAL {
                    r = writer.flush();
                    last_flush = Instant::now();
                }
                r
            }
            Ok(Msg::Flush) => {
                last_flush = Instant::now();
                writer.flush()
            }
            Ok(Msg::Finish { stop_reason, extra }) => {
                let r = writer.finish(&stop_reason, extra);
                if r.is_err() {
                    failed.store(true, Ordering::Release);
                }
                return r;
            }
            Err(RecvTimeoutError::Disconnected) => {
                let r = writer.finish(STOP_REASON_DROPPED, Value::Null);
                if r.is_err() {
                    failed.store(true, Ordering::Release);
                }
                return r;
            }
        };
        if let Err(e) = step {
            // Recorded in the metadata now (the run loop learns of it at its next row); the
            // writer is abandoned, keeping every row flushed before.
            let _ = writer.record_failure(&e.to_string());
            failed.store(true, Ordering::Release);
            return Err(e);
        }
    }
}
