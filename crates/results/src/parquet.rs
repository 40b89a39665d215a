//! Per-IO records as Parquet (cargo feature `parquet`): the columns of the
//! CSV export, one row per IO, one or more row groups per run.
//!
//! `pandas.read_parquet(FILE)` (with pyarrow) loads it; see
//! docs/results-format.md. Written with the parquet crate's column writer,
//! without arrow, which keeps the feature build short.

use std::fs::File;
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::records::IoRecord;

/// The Parquet schema: the CSV's columns (docs/results-format.md).
pub const SCHEMA: &str = "
message flashlab_io {
  required binary run (STRING);
  required int64 index;
  required int32 stream;
  required binary mode (STRING);
  required int64 offset_bytes;
  required int32 size_bytes;
  required int64 submit_ns;
  required int64 complete_ns;
  required int64 latency_ns;
  required boolean warmup;
  required boolean error;
}";

/// Rows per row group: big enough to compress well, small enough to bound memory.
const ROW_GROUP: usize = 1 << 20;

pub struct ParquetWriter {
    inner: SerializedFileWriter<File>,
}

impl ParquetWriter {
    pub fn new(file: File) -> Result<ParquetWriter, ParquetError> {
        let schema = Arc::new(parse_message_type(SCHEMA)?);
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_created_by(format!("flashlab-results {}", env!("CARGO_PKG_VERSION")))
                .build(),
        );
        Ok(ParquetWriter {
            inner: SerializedFileWriter::new(file, schema, props)?,
        })
    }

    /// Appends one run's records.
    pub fn write_run(&mut self, run: &str, records: &[IoRecord]) -> Result<(), ParquetError> {
        for chunk in records.chunks(ROW_GROUP) {
            let mut rg = self.inner.next_row_group()?;
            let mut col = 0;
            while let Some(mut w) = rg.next_column()? {
                let i64s = |f: &dyn Fn(&IoRecord) -> u64| -> Vec<i64> {
                    chunk.iter().map(|r| f(r) as i64).collect()
                };
                match col {
                    0 => {
                        let v = vec![ByteArray::from(run); chunk.len()];
                        w.typed::<ByteArrayType>().write_batch(&v, None, None)?;
                    }
                    1 => {
                        w.typed::<Int64Type>()
                            .write_batch(&i64s(&|r| r.index), None, None)?;
                    }
                    2 => {
                        let v: Vec<i32> = chunk.iter().map(|r| i32::from(r.stream)).collect();
                        w.typed::<Int32Type>().write_batch(&v, None, None)?;
                    }
                    3 => {
                        let v: Vec<ByteArray> = chunk
                            .iter()
                            .map(|r| ByteArray::from(r.mode.to_string().as_str()))
                            .collect();
                        w.typed::<ByteArrayType>().write_batch(&v, None, None)?;
                    }
                    4 => {
                        w.typed::<Int64Type>().write_batch(
                            &i64s(&|r| r.offset_bytes),
                            None,
                            None,
                        )?;
                    }
                    5 => {
                        let v: Vec<i32> = chunk.iter().map(|r| r.size_bytes as i32).collect();
                        w.typed::<Int32Type>().write_batch(&v, None, None)?;
                    }
                    6 => {
                        w.typed::<Int64Type>()
                            .write_batch(&i64s(&|r| r.submit_ns), None, None)?;
                    }
                    7 => {
                        w.typed::<Int64Type>().write_batch(
                            &i64s(&|r| r.complete_ns),
                            None,
                            None,
                        )?;
                    }
                    8 => {
                        w.typed::<Int64Type>().write_batch(
                            &i64s(&|r| r.latency_ns()),
                            None,
                            None,
                        )?;
                    }
                    9 => {
                        let v: Vec<bool> = chunk.iter().map(IoRecord::is_warmup).collect();
                        w.typed::<BoolType>().write_batch(&v, None, None)?;
                    }
                    _ => {
                        let v: Vec<bool> = chunk.iter().map(IoRecord::is_error).collect();
                        w.typed::<BoolType>().write_batch(&v, None, None)?;
                    }
                }
                w.close()?;
                col += 1;
            }
            rg.close()?;
        }
        Ok(())
    }

    pub fn finish(self) -> Result<(), ParquetError> {
        self.inner.close()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_device::Mode;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    #[test]
    fn writes_rows_that_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("io.parquet");
        let rec = |i: u64, mode| IoRecord {
            index: i,
            stream: 0,
            mode,
            offset_bytes: i * 4096,
            size_bytes: 4096,
            submit_ns: i * 10,
            complete_ns: i * 10 + 7,
            flags: u8::from(i == 0),
        };
        let mut w = ParquetWriter::new(File::create(&path).unwrap()).unwrap();
        w.write_run(
            "RW",
            &(0..100).map(|i| rec(i, Mode::Write)).collect::<Vec<_>>(),
        )
        .unwrap();
        w.write_run(
            "SR",
            &(0..20).map(|i| rec(i, Mode::Read)).collect::<Vec<_>>(),
        )
        .unwrap();
        w.finish().unwrap();
        let r = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let meta = r.metadata();
        assert_eq!(meta.file_metadata().num_rows(), 120);
        assert_eq!(meta.file_metadata().schema_descr().num_columns(), 11);
        let first = r.get_row_iter(None).unwrap().next().unwrap().unwrap();
        let text = first.to_string();
        assert!(
            text.contains("run: \"RW\"")
                && text.contains("latency_ns: 7")
                && text.contains("warmup: true"),
            "{text}"
        );
    }
}
