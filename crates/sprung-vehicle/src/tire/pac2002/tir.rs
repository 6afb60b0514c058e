//! The `.tir` file format (TNO/ADAMS "Tiem Orbit" property files of Magic Formula tires, the
//! format of `../shared/data/chrono/VW_microbus/json/mf_185_80R14.tir` and
//! `../shared/data/chrono/feda/tires/335_65R22_5_G275MSA_60psi.tir`): a syntax-only reader.
//!
//! What it accepts (`docs/tire-pac2002.md`, "The .tir parser"):
//! * `[SECTION]` headers; `KEY = value` lines with a number or a quoted string (`'...'` or
//!   `"..."`), optionally followed by a `$comment` or `!comment`;
//! * whole-line comments starting with `!` or `$`, blank lines, DOS line ends;
//! * table sections (`[SHAPE]`, `[DEFLECTION_LOAD_CURVE]`, …): an optional `{column names}` line
//!   and rows of whitespace-separated numbers;
//! * numbers in Rust/C syntax, Fortran `D` exponents (`1.0D+03`) included.
//!
//! Which keys a section may hold, which are required and what they mean is not decided here but
//! by [`super::coefficients`], which reports unknown and missing keys with the line of this
//! file. A key given twice in a section is an error; a table section given twice keeps the first
//! and records a note ([`TirFile::notes`]).

use std::fmt;
use std::path::{Path, PathBuf};

/// A located error in a `.tir` file: `file:line: message` (line 0 = the file as a whole).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct TirError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, 0 when the error concerns the whole file (a missing section, say).
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for TirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file.display(), self.message)
        }
    }
}

/// The value of a `KEY = value` line.
#[derive(Debug, Clone, PartialEq)]
pub enum TirValue {
    /// A number.
    Number(f64),
    /// A quoted string (quotes removed).
    Text(String),
}

/// One `KEY = value` line.
#[derive(Debug, Clone, PartialEq)]
pub struct TirEntry {
    /// Section name, upper case, without brackets.
    pub section: String,
    /// Key, upper case.
    pub key: String,
    /// Value.
    pub value: TirValue,
    /// 1-based line number.
    pub line: usize,
}

/// A table section (rows of numbers).
#[derive(Debug, Clone, PartialEq)]
pub struct TirTable {
    /// Section name, upper case.
    pub section: String,
    /// Column names from the `{...}` line (empty when absent).
    pub columns: Vec<String>,
    /// Rows of numbers.
    pub rows: Vec<Vec<f64>>,
    /// Line of the section header.
    pub line: usize,
}

/// A parsed `.tir` file: its key-value entries and tables in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct TirFile {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// `KEY = value` entries.
    pub entries: Vec<TirEntry>,
    /// Table sections.
    pub tables: Vec<TirTable>,
    /// Section headers with their lines, in file order.
    pub sections: Vec<(String, usize)>,
    /// Remarks for the user (repeated tables, ignored sections), not errors.
    pub notes: Vec<String>,
}

impl TirFile {
    /// Reads and parses a file.
    pub fn read(path: &Path) -> Result<Self, TirError> {
        let text = std::fs::read_to_string(path).map_err(|e| TirError {
            file: path.to_path_buf(),
            line: 0,
            message: format!("cannot read the .tir file: {e}"),
        })?;
        Self::parse(&text, path)
    }

    /// Parses the text of a file; `path` names it in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, TirError> {
        let err = |line: usize, message: String| TirError {
            file: path.to_path_buf(),
            line,
            message,
        };
        let mut file = TirFile {
            path: path.to_path_buf(),
            entries: Vec::new(),
            tables: Vec::new(),
            sections: Vec::new(),
            notes: Vec::new(),
        };
        let mut section: Option<String> = None;
        // Index in `tables` of the table being filled, or None (key-value section, or a repeated
        // table whose rows are skipped).
        let mut table: Option<usize> = None;
        let mut skipping_repeat = false;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.trim_end_matches('\r').trim();
            if line.is_empty() || line.starts_with('!') || line.starts_with('$') {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                let Some(end) = rest.find(']') else {
                    return Err(err(
                        line_no,
                        format!("section header `{line}` has no closing `]`"),
                    ));
                };
                let name = rest[..end].trim().to_ascii_uppercase();
                if name.is_empty() {
                    return Err(err(line_no, "empty section name `[]`".into()));
                }
                let after = rest[end + 1..].trim();
                if !(after.is_empty() || after.starts_with('$') || after.starts_with('!')) {
                    return Err(err(
                        line_no,
                        format!("unexpected text `{after}` after the section header [{name}]"),
                    ));
                }
                if let Some((_, first)) = file.sections.iter().find(|(s, _)| *s == name) {
                    let is_table = file.tables.iter().any(|t| t.section == name);
                    if is_table {
                        file.notes.push(format!(
                            "{}:{line_no}: table section [{name}] repeated; the first one (line {first}) is used",
                            path.display()
                        ));
                        skipping_repeat = true;
                    } else {
                        // A repeated key-value section continues the first; repeated keys are
                        // caught below.
                        skipping_repeat = false;
                    }
                } else {
                    skipping_repeat = false;
                }
                file.sections.push((name.clone(), line_no));
                section = Some(name);
                table = None;
                continue;
            }
            let Some(sec) = section.clone() else {
                return Err(err(
                    line_no,
                    format!("`{line}` comes before any [SECTION] header"),
                ));
            };
            if skipping_repeat {
                continue;
            }
            if let Some(eq) = line.find('=') {
                if table.is_some() {
                    return Err(err(
                        line_no,
                        format!("a `KEY = value` line inside the table section [{sec}]"),
                    ));
                }
                let key = line[..eq].trim().to_ascii_uppercase();
                if key.is_empty() || key.contains(char::is_whitespace) {
                    return Err(err(
                        line_no,
                        format!(
                            "`{}` is not a key name (expected KEY = value)",
                            line[..eq].trim()
                        ),
                    ));
                }
                let value = parse_value(line[eq + 1..].trim())
                    .map_err(|m| err(line_no, format!("{key}: {m}")))?;
                if let Some(prev) = file
                    .entries
                    .iter()
                    .find(|e| e.section == sec && e.key == key)
                {
                    return Err(err(
                        line_no,
                        format!(
                            "{key} is given twice in [{sec}] (first on line {}); keep one",
                            prev.line
                        ),
                    ));
                }
                file.entries.push(TirEntry {
                    section: sec,
                    key,
                    value,
                    line: line_no,
                });
                continue;
            }
            // A table line: `{names}` or numbers.
            let idx = match table {
                Some(t) => t,
                None => {
                    if file.entries.iter().any(|e| e.section == sec) {
                        return Err(err(
                            line_no,
                            format!(
                                "`{line}` is neither `KEY = value` nor a comment (section [{sec}] holds keys)"
                            ),
                        ));
                    }
                    let header_line = file
                        .sections
                        .iter()
                        .rev()
                        .find(|(s, _)| *s == sec)
                        .map_or(line_no, |(_, l)| *l);
                    file.tables.push(TirTable {
                        section: sec.clone(),
                        columns: Vec::new(),
                        rows: Vec::new(),
                        line: header_line,
                    });
                    table = Some(file.tables.len() - 1);
                    file.tables.len() - 1
                }
            };
            if let Some(inner) = line.strip_prefix('{') {
                let inner = inner.trim_end_matches('}');
                file.tables[idx].columns = inner.split_whitespace().map(str::to_string).collect();
                continue;
            }
            let body = strip_comment(line);
            let mut row = Vec::new();
            for tok in body.split_whitespace() {
                row.push(parse_number(tok).ok_or_else(|| {
                    err(
                        line_no,
                        format!("`{tok}` in the table [{sec}] is not a number"),
                    )
                })?);
            }
            if let Some(first) = file.tables[idx].rows.first()
                && first.len() != row.len()
            {
                {
                    return Err(err(
                        line_no,
                        format!(
                            "table [{sec}] row has {} numbers, the first row {}",
                            row.len(),
                            first.len()
                        ),
                    ));
                }
            }
            file.tables[idx].rows.push(row);
        }
        Ok(file)
    }

    /// The entry of `key` in `section`, if given.
    pub fn entry(&self, section: &str, key: &str) -> Option<&TirEntry> {
        self.entries
            .iter()
            .find(|e| e.section == section && e.key == key)
    }

    /// A number given in the file (any section), if present and numeric.
    pub fn number(&self, key: &str) -> Option<f64> {
        self.entries.iter().find_map(|e| match e.value {
            TirValue::Number(x) if e.key == key => Some(x),
            _ => None,
        })
    }

    /// The table of a section, if present.
    pub fn table(&self, section: &str) -> Option<&TirTable> {
        self.tables.iter().find(|t| t.section == section)
    }

    /// The line of the first header of `section`, if present.
    pub fn section_line(&self, section: &str) -> Option<usize> {
        self.sections
            .iter()
            .find(|(s, _)| s == section)
            .map(|(_, l)| *l)
    }
}

/// Removes a trailing `$comment` / `!comment` (outside quotes).
fn strip_comment(s: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '$' || c == '!' => return s[..i].trim_end(),
            None => {}
        }
    }
    s.trim_end()
}

fn parse_value(s: &str) -> Result<TirValue, String> {
    let s = strip_comment(s);
    if s.is_empty() {
        return Err("no value after `=` (expected a number or a quoted string)".into());
    }
    let first = s.chars().next().unwrap_or(' ');
    if first == '\'' || first == '"' {
        let rest = &s[1..];
        let Some(end) = rest.find(first) else {
            return Err(format!("string {s} has no closing {first}"));
        };
        let tail = rest[end + 1..].trim();
        if !tail.is_empty() {
            return Err(format!("unexpected `{tail}` after the string"));
        }
        return Ok(TirValue::Text(rest[..end].to_string()));
    }
    parse_number(s)
        .map(TirValue::Number)
        .ok_or_else(|| format!("`{s}` is not a number (strings need quotes: '{s}')"))
}

/// A number, accepting Fortran `D` exponents.
fn parse_number(s: &str) -> Option<f64> {
    let x = s
        .parse::<f64>()
        .ok()
        .or_else(|| s.replace(['D', 'd'], "e").parse::<f64>().ok())?;
    x.is_finite().then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<TirFile, TirError> {
        TirFile::parse(s, Path::new("t.tir"))
    }

    #[test]
    fn keys_strings_comments_tables() {
        let f = parse(
            "! header\n[UNITS]\r\nLENGTH = 'meter' $ comment\n[MODEL]\nUSE_MODE = 4 $x\nVXLOW=1.0D+00\n\
             [SHAPE]\n{radial width}\n 1.0 0.0\n 0.9\t1.0 $ end\n[SHAPE]\n1 2\n",
        )
        .unwrap();
        assert_eq!(
            f.entry("UNITS", "LENGTH").unwrap().value,
            TirValue::Text("meter".into())
        );
        assert_eq!(f.number("USE_MODE"), Some(4.0));
        assert_eq!(f.number("VXLOW"), Some(1.0));
        let t = f.table("SHAPE").unwrap();
        assert_eq!(t.columns, vec!["radial", "width"]);
        assert_eq!(t.rows, vec![vec![1.0, 0.0], vec![0.9, 1.0]]);
        assert_eq!(f.notes.len(), 1, "{:?}", f.notes);
    }

    #[test]
    fn located_errors() {
        let e = parse("[MODEL]\nUSE_MODE = four\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("t.tir:2: USE_MODE:"), "{e}");
        let e = parse("[MODEL]\nA = 1\nA = 2\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("line 2"), "{e}");
        let e = parse("A = 1\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("[T]\n1 2\n3\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse("[MODEL\n").unwrap_err();
        assert!(e.message.contains("closing"), "{e}");
        let e = parse("[MODEL]\nX = 'abc\n").unwrap_err();
        assert!(e.message.contains("closing"), "{e}");
    }
}
