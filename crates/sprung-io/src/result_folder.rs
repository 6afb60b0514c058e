//! Result folders: validating the result name and locking the folder of a running run.
//!
//! A run calls [`ResultFolder::acquire`] only after everything else (model, settings, outputs)
//! has been validated, so a rejected run never creates or changes a file. `acquire` checks the
//! result name, creates the folder and takes the lock file [`LOCK_FILE_NAME`] in it, which holds
//! the process id and name of the run. A second run into the same folder is refused while that
//! process lives; a lock left behind by a process that no longer exists (killed, machine
//! restarted) is detected as stale and taken over. The lock is removed when the
//! [`ResultFolder`] is dropped.
//!
//! Liveness is checked through `/proc/<pid>` (Linux): the process must exist and have the
//! recorded name (so a recycled process id does not keep a stale lock alive). Where `/proc` is
//! not available a lock is assumed live, and the message says which file to delete.
//!
//! Two runs that find the same stale lock at the same instant could both take it over; the
//! window is the time between reading and re-creating the lock file (microseconds).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::channel::Format;
use crate::error::IoError;

/// Name of the lock file inside a result folder.
pub const LOCK_FILE_NAME: &str = ".sprung.lock";

/// A locked result folder; the lock is released on drop.
#[derive(Debug)]
pub struct ResultFolder {
    dir: PathBuf,
    lock: PathBuf,
    result: PathBuf,
    name: String,
}

/// Checks a result file name (without extension): not empty, not only spaces, no path
/// separators, not `.` or `..`, no control characters.
pub fn validate_result_name(name: &str) -> Result<(), IoError> {
    let bad = |message: String| IoError::InvalidName { message };
    if name.trim().is_empty() {
        return Err(bad(
            "the result name is empty; give a file name without extension, e.g. --name results"
                .into(),
        ));
    }
    if name.contains(['/', '\\']) {
        return Err(bad(format!(
            "the result name '{name}' contains a path separator; put folders into --out and give only a file name to --name"
        )));
    }
    if name == "." || name == ".." {
        return Err(bad(format!(
            "'{name}' is not a file name; give e.g. --name results"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(bad(format!(
            "the result name {name:?} contains control characters"
        )));
    }
    Ok(())
}

impl ResultFolder {
    /// Validates `name`, creates `dir` (and parents) and locks it for this process. The result
    /// file is `<dir>/<name>.<csv|parquet>`. Errors: invalid name, folder not creatable, folder in
    /// use by a running process (the message names its process id and the lock file).
    pub fn acquire(dir: &Path, name: &str, format: Format) -> Result<ResultFolder, IoError> {
        validate_result_name(name)?;
        if dir.exists() && !dir.is_dir() {
            return Err(IoError::Folder {
                path: dir.to_path_buf(),
                message: "exists but is not a folder; choose another --out".into(),
            });
        }
        std::fs::create_dir_all(dir).map_err(|e| IoError::io(dir, e))?;
        let lock = dir.join(LOCK_FILE_NAME);
        let me = std::process::id();
        let my_name = process_name(me).unwrap_or_default();
        for attempt in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&lock) {
                Ok(mut f) => {
                    writeln!(f, "pid={me}\nname={my_name}").map_err(|e| IoError::io(&lock, e))?;
                    let ext = match format {
                        Format::Csv => "csv",
                        Format::Parquet => "parquet",
                    };
                    return Ok(ResultFolder {
                        dir: dir.to_path_buf(),
                        result: dir.join(format!("{name}.{ext}")),
                        lock,
                        name: name.to_string(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt == 0 => {
                    let text = std::fs::read_to_string(&lock).unwrap_or_default();
                    let (pid, pname) = parse_lock(&text);
                    match pid {
                        Some(pid) if lock_holder_alive(pid, &pname) => {
                            return Err(IoError::Folder {
                                path: dir.to_path_buf(),
                                message: format!(
                                    "is in use by a running sprung process (pid {pid}{}); wait for it to finish, stop it, or choose another --out. If no such run exists, delete {}",
                                    if pid == me { ", this process" } else { "" },
                                    lock.display()
                                ),
                            });
                        }
                        _ => {
                            // Stale (process gone) or unreadable: take it over.
                            std::fs::remove_file(&lock).map_err(|e| IoError::io(&lock, e))?;
                        }
                    }
                }
                Err(e) => return Err(IoError::io(&lock, e)),
            }
        }
        Err(IoError::Folder {
            path: dir.to_path_buf(),
            message: format!(
                "another process took the lock {} at the same moment; try again",
                lock.display()
            ),
        })
    }

    /// The result folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The result file `<dir>/<name>.<csv|parquet>`.
    pub fn result_path(&self) -> &Path {
        &self.result
    }

    /// Another file of this run next to the results: `<dir>/<name>.<ext>` (e.g. `png`).
    pub fn sibling(&self, ext: &str) -> PathBuf {
        self.dir.join(format!("{}.{ext}", self.name))
    }

    /// The lock file.
    pub fn lock_path(&self) -> &Path {
        &self.lock
    }
}

impl Drop for ResultFolder {
    fn drop(&mut self) {
        // Only remove a lock that is still ours.
        if let Ok(text) = std::fs::read_to_string(&self.lock)
            && parse_lock(&text).0 == Some(std::process::id())
        {
            let _ = std::fs::remove_file(&self.lock);
        }
    }
}

fn parse_lock(text: &str) -> (Option<u32>, String) {
    let mut pid = None;
    let mut name = String::new();
    for l in text.lines() {
        if let Some(v) = l.strip_prefix("pid=") {
            pid = v.trim().parse().ok();
        } else if let Some(v) = l.strip_prefix("name=") {
            name = v.trim().to_string();
        }
    }
    (pid, name)
}

fn process_name(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
}

fn lock_holder_alive(pid: u32, recorded_name: &str) -> bool {
    if !Path::new("/proc/self").exists() {
        // No way to tell: assume the holder lives.
        return true;
    }
    match process_name(pid) {
        None => false,
        Some(n) => recorded_name.is_empty() || n == recorded_name,
    }
}
