//! Reading the files a user names, bounded before they are read: only regular files (a FIFO, a
//! device such as `/dev/zero` or a directory is an error naming the path), at most a cap of bytes
//! (checked while reading, so an endless file stops at the cap), and UTF-8 text.

use std::io::Read;

use crate::cmd::CmdError;

/// The largest launch, model, system or scenario file read [bytes]: 8 MiB (real launch files and
/// configs are kilobytes; `base.yml` of MaxText is ~40 KB).
pub const MAX_INPUT_BYTES: u64 = 8 << 20;

/// The largest measured-runs file `fmperf validate --data` reads [bytes]: 64 MiB.
pub const MAX_DATA_BYTES: u64 = 64 << 20;

/// Reads `path` (given with `flag`, e.g. `--from`) as text of at most `cap` bytes.
pub fn read_text(flag: &str, path: &str, cap: u64) -> Result<String, CmdError> {
    let fail = |why: String| CmdError::Usage(format!("{flag} {path}: {why}"));
    let meta = std::fs::metadata(path).map_err(|e| fail(format!("cannot read the file: {e}")))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() { "a directory" } else { "not a regular file (a pipe, socket or device)" };
        return Err(fail(format!("is {kind}; give a regular file")));
    }
    if meta.len() > cap {
        return Err(fail(format!("is {} bytes; the limit is {cap} bytes", meta.len())));
    }
    let file = std::fs::File::open(path).map_err(|e| fail(format!("cannot read the file: {e}")))?;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|e| fail(format!("cannot read the file: {e}")))?;
    if bytes.len() as u64 > cap {
        return Err(fail(format!("is more than {cap} bytes (the limit)")));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        fail(format!("is not UTF-8 text (byte {} is not valid): is it a binary file?", e.utf8_error().valid_up_to()))
    })?;
    // A UTF-8 byte-order mark (as some Windows editors write) declares the encoding; it is not part
    // of the text. A browser's file reader drops it the same way.
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_small_regular_text_file() {
        let dir = std::env::temp_dir().join(format!("fmperf-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.to_string_lossy().to_string();
        assert!(
            read_text("--from", &d, 100)
                .map(|_| ())
                .map_err(|e| format!("{e:?}"))
                .unwrap_err()
                .contains("is a directory")
        );
        let big = dir.join("big.txt");
        std::fs::write(&big, vec![b'a'; 101]).unwrap();
        let e = read_text("--from", &big.to_string_lossy(), 100).map(|_| ()).map_err(|e| format!("{e:?}")).unwrap_err();
        assert!(e.contains("the limit is 100 bytes"), "{e}");
        let bin = dir.join("bin.dat");
        std::fs::write(&bin, [0x66, 0xff, 0xfe]).unwrap();
        assert!(
            read_text("--from", &bin.to_string_lossy(), 100)
                .map(|_| ())
                .map_err(|e| format!("{e:?}"))
                .unwrap_err()
                .contains("not UTF-8")
        );
        let ok = dir.join("ok.sh");
        std::fs::write(&ok, "--num-layers 2\n").unwrap();
        assert_eq!(read_text("--from", &ok.to_string_lossy(), 100).unwrap(), "--num-layers 2\n");
        // A UTF-8 byte-order mark is dropped; one inside the text stays.
        let bom = dir.join("bom.json");
        std::fs::write(&bom, "\u{feff}{\"a\": \"\u{feff}\"}").unwrap();
        assert_eq!(read_text("--model", &bom.to_string_lossy(), 100).unwrap(), "{\"a\": \"\u{feff}\"}");
        #[cfg(unix)]
        if std::path::Path::new("/dev/zero").exists() {
            let e = read_text("--model", "/dev/zero", 100).map(|_| ()).map_err(|e| format!("{e:?}")).unwrap_err();
            assert!(e.contains("not a regular file"), "{e}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
