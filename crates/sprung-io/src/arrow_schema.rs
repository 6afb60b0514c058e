//! Minimal encoder of the Apache Arrow IPC schema message that Arrow-based Parquet readers
//! (pyarrow/pandas, arrow-rs, DuckDB, ...) look for under the key-value file metadata entry
//! `ARROW:schema`. It is the only standard place for per-field metadata in a Parquet file;
//! `sprung-io` uses it to attach `{"unit": ...}` (and `description`) to every column.
//!
//! Layout (Arrow columnar format specification, "Encapsulated message format", and the
//! flatbuffer schemas `Message.fbs` / `Schema.fbs`): `0xFFFFFFFF`, little-endian `i32` length of
//! the flatbuffer (padded to 8 bytes), the flatbuffer `Message { version: V5, header: Schema,
//! bodyLength: 0 }`; the whole is base64-encoded. Every field is a non-nullable
//! `FloatingPoint(DOUBLE)` with no children. The flatbuffer is written front to back: the root
//! offset, then each vtable directly before its table, then the table's children; all offsets
//! therefore point forward as the format requires, and scalars are naturally aligned.

/// One inline table field value.
enum Val {
    U8(u8),
    I16(i16),
    I64(i64),
    Off(Obj),
}

/// A flatbuffer object reachable through an offset.
enum Obj {
    /// Table as (vtable slot, value) pairs.
    Table(Vec<(u16, Val)>),
    /// UTF-8 string.
    Str(String),
    /// Vector of tables.
    Tables(Vec<Obj>),
}

struct Builder {
    buf: Vec<u8>,
}

impl Builder {
    fn align(&mut self, n: usize) {
        while !self.buf.len().is_multiple_of(n) {
            self.buf.push(0);
        }
    }

    fn patch_u32(&mut self, at: usize, v: u32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Writes `obj`; returns the position an offset must point to.
    fn write(&mut self, obj: Obj) -> usize {
        match obj {
            Obj::Str(s) => {
                self.align(4);
                let pos = self.buf.len();
                self.buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
                self.buf.extend_from_slice(s.as_bytes());
                self.buf.push(0);
                pos
            }
            Obj::Tables(items) => {
                self.align(4);
                let pos = self.buf.len();
                self.buf
                    .extend_from_slice(&(items.len() as u32).to_le_bytes());
                let first = self.buf.len();
                self.buf.resize(first + 4 * items.len(), 0);
                for (k, item) in items.into_iter().enumerate() {
                    let at = first + 4 * k;
                    let target = self.write(item);
                    self.patch_u32(at, (target - at) as u32);
                }
                pos
            }
            Obj::Table(fields) => self.write_table(fields),
        }
    }

    fn write_table(&mut self, fields: Vec<(u16, Val)>) -> usize {
        // Inline layout: soffset (4 bytes) at 0, then fields by decreasing size so that each is
        // aligned when the table start is 8-aligned.
        let size = |v: &Val| match v {
            Val::I64(_) => 8,
            Val::Off(_) => 4,
            Val::I16(_) => 2,
            Val::U8(_) => 1,
        };
        let mut order: Vec<usize> = (0..fields.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(size(&fields[i].1)));
        let mut offsets = vec![0usize; fields.len()];
        let mut cursor = 4usize;
        for &i in &order {
            let s = size(&fields[i].1);
            cursor = cursor.div_ceil(s) * s;
            offsets[i] = cursor;
            cursor += s;
        }
        let table_size = cursor.div_ceil(4) * 4;
        let slots = fields.iter().map(|f| f.0 as usize + 1).max().unwrap_or(0);
        let mut vtable = vec![0u16; 2 + slots];
        vtable[0] = (4 + 2 * slots) as u16;
        vtable[1] = table_size as u16;
        for (f, &o) in fields.iter().zip(&offsets) {
            vtable[2 + f.0 as usize] = o as u16;
        }
        self.align(2);
        let vt_pos = self.buf.len();
        for v in vtable {
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        self.align(8);
        let table = self.buf.len();
        self.buf.resize(table + table_size, 0);
        let soff = (table - vt_pos) as i32;
        self.buf[table..table + 4].copy_from_slice(&soff.to_le_bytes());
        let mut children = Vec::new();
        for ((_, val), o) in fields.into_iter().zip(offsets) {
            let at = table + o;
            match val {
                Val::U8(v) => self.buf[at] = v,
                Val::I16(v) => self.buf[at..at + 2].copy_from_slice(&v.to_le_bytes()),
                Val::I64(v) => self.buf[at..at + 8].copy_from_slice(&v.to_le_bytes()),
                Val::Off(obj) => children.push((at, obj)),
            }
        }
        for (at, obj) in children {
            let target = self.write(obj);
            self.patch_u32(at, (target - at) as u32);
        }
        table
    }
}

fn key_value(key: &str, value: &str) -> Obj {
    Obj::Table(vec![
        (0, Val::Off(Obj::Str(key.to_string()))),
        (1, Val::Off(Obj::Str(value.to_string()))),
    ])
}

/// A column of the schema: name and field metadata (key, value) pairs.
pub(crate) struct ArrowField<'a> {
    pub name: &'a str,
    pub metadata: Vec<(&'a str, &'a str)>,
}

/// Arrow `MetadataVersion::V5`.
const METADATA_V5: i16 = 4;
/// `MessageHeader::Schema`.
const HEADER_SCHEMA: u8 = 1;
/// `Type::FloatingPoint`.
const TYPE_FLOATING_POINT: u8 = 3;
/// `Precision::DOUBLE`.
const PRECISION_DOUBLE: i16 = 2;

/// Encoded IPC message (continuation marker, length, flatbuffer) for non-nullable f64 fields.
pub(crate) fn schema_message(fields: &[ArrowField<'_>]) -> Vec<u8> {
    let fields = fields
        .iter()
        .map(|f| {
            let mut t = vec![
                (0, Val::Off(Obj::Str(f.name.to_string()))),
                (1, Val::U8(0)), // nullable: false
                (2, Val::U8(TYPE_FLOATING_POINT)),
                (
                    3,
                    Val::Off(Obj::Table(vec![(0, Val::I16(PRECISION_DOUBLE))])),
                ),
                (5, Val::Off(Obj::Tables(Vec::new()))), // children
            ];
            if !f.metadata.is_empty() {
                t.push((
                    6,
                    Val::Off(Obj::Tables(
                        f.metadata.iter().map(|(k, v)| key_value(k, v)).collect(),
                    )),
                ));
            }
            Obj::Table(t)
        })
        .collect();
    let schema = Obj::Table(vec![
        (0, Val::I16(0)), // endianness: Little
        (1, Val::Off(Obj::Tables(fields))),
    ]);
    let message = Obj::Table(vec![
        (0, Val::I16(METADATA_V5)),
        (1, Val::U8(HEADER_SCHEMA)),
        (2, Val::Off(schema)),
        (3, Val::I64(0)), // bodyLength
    ]);
    let mut b = Builder { buf: vec![0; 4] };
    let root = b.write(message);
    b.patch_u32(0, root as u32);
    b.align(8);
    let mut out = Vec::with_capacity(8 + b.buf.len());
    out.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
    out.extend_from_slice(&(b.buf.len() as i32).to_le_bytes());
    out.extend_from_slice(&b.buf);
    out
}

/// Standard base64 with padding (RFC 4648, section 4).
pub(crate) fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                s.push(A[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_test_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (i, o) in cases {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    fn u32_at(b: &[u8], at: usize) -> usize {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
    }
    fn u16_at(b: &[u8], at: usize) -> usize {
        u16::from_le_bytes(b[at..at + 2].try_into().unwrap()) as usize
    }
    /// Position of field `slot` of the table at `table`, if present.
    fn field(b: &[u8], table: usize, slot: usize) -> Option<usize> {
        let soff = i32::from_le_bytes(b[table..table + 4].try_into().unwrap());
        let vt = (table as i64 - soff as i64) as usize;
        let vt_len = u16_at(b, vt);
        if 4 + 2 * slot >= vt_len {
            return None;
        }
        match u16_at(b, vt + 4 + 2 * slot) {
            0 => None,
            o => Some(table + o),
        }
    }
    fn deref(b: &[u8], at: usize) -> usize {
        at + u32_at(b, at)
    }
    fn string(b: &[u8], at: usize) -> String {
        let p = deref(b, at);
        let n = u32_at(b, p);
        String::from_utf8(b[p + 4..p + 4 + n].to_vec()).unwrap()
    }

    /// Walks the message with an independent flatbuffer reader written from the format spec.
    #[test]
    fn schema_message_decodes() {
        let msg = schema_message(&[
            ArrowField {
                name: "time",
                metadata: vec![("unit", "s")],
            },
            ArrowField {
                name: "F",
                metadata: vec![("unit", "N"), ("description", "force")],
            },
        ]);
        assert_eq!(&msg[..4], &[0xFF; 4]);
        let len = u32_at(&msg, 4);
        assert_eq!(len % 8, 0);
        let b = &msg[8..];
        assert_eq!(b.len(), len);
        let root = u32_at(b, 0);
        assert_eq!(root % 8, 0);
        let version = field(b, root, 0).unwrap();
        assert_eq!(u16_at(b, version), 4);
        assert_eq!(b[field(b, root, 1).unwrap()], 1);
        let body = field(b, root, 3).unwrap();
        assert_eq!(body % 8, 0);
        let schema = deref(b, field(b, root, 2).unwrap());
        let fields = deref(b, field(b, schema, 1).unwrap());
        assert_eq!(u32_at(b, fields), 2);
        let f1 = deref(b, fields + 8);
        assert_eq!(string(b, field(b, f1, 0).unwrap()), "F");
        assert_eq!(b[field(b, f1, 1).unwrap()], 0);
        assert_eq!(b[field(b, f1, 2).unwrap()], 3);
        let fp = deref(b, field(b, f1, 3).unwrap());
        assert_eq!(u16_at(b, field(b, fp, 0).unwrap()), 2);
        let children = deref(b, field(b, f1, 5).unwrap());
        assert_eq!(u32_at(b, children), 0);
        let kvs = deref(b, field(b, f1, 6).unwrap());
        assert_eq!(u32_at(b, kvs), 2);
        let kv = deref(b, kvs + 8);
        assert_eq!(string(b, field(b, kv, 0).unwrap()), "description");
        assert_eq!(string(b, field(b, kv, 1).unwrap()), "force");
    }
}
