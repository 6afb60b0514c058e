//! Error types: every message names the file and line and says how to fix the problem.

use std::fmt;

/// One validation problem of a model element.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Model file label (path as given).
    pub file: String,
    /// 1-based line where the element is defined, when it could be located.
    pub line: Option<usize>,
    /// Element kind, e.g. `"body"`, `"marker"`, `"force element"`, `"solver"`.
    pub kind: String,
    /// Element name (for sections such as `[solver]` the section name).
    pub name: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

impl Problem {
    /// A problem without location; the loader fills in `file` and `line`.
    pub fn new(
        kind: &str,
        name: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            file: String::new(),
            line: None,
            kind: kind.to_string(),
            name: name.to_string(),
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: ", self.file, l)?,
            None => write!(f, "{}: ", self.file)?,
        }
        write!(
            f,
            "{} '{}': {}; fix: {}",
            self.kind, self.name, self.message, self.hint
        )
    }
}

fn list(file: &str, problems: &[Problem]) -> String {
    let mut s = format!(
        "model file {file} has {} problem{}:",
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
    for p in problems {
        s.push_str("\n  - ");
        s.push_str(&p.to_string());
    }
    s
}

/// Error returned by loading, expansion and validation.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}; check the path and the file permissions")]
    Io {
        /// File path.
        path: String,
        /// Underlying error.
        source: std::io::Error,
    },
    /// The file extension selects no supported syntax.
    #[error(
        "{path}: unsupported model file extension; supported are .toml (TOML) and .json (JSON)"
    )]
    UnsupportedExtension {
        /// File path.
        path: String,
    },
    /// Syntax or type error (unknown field, wrong type, missing field).
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        /// File label.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Parser message.
        message: String,
    },
    /// A CSV input file could not be read or is malformed.
    #[error("{file}:{line}: {message}")]
    Csv {
        /// CSV file path.
        file: String,
        /// 1-based line in the CSV file (0 when the file could not be opened).
        line: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// One or more validation problems (all of them are listed).
    #[error("{}", list(file, problems))]
    Invalid {
        /// File label.
        file: String,
        /// Every problem found.
        problems: Vec<Problem>,
    },
}
