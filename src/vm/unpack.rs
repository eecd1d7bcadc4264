//! Decompression through the host's tools (`xz`, `zstd`, `gzip`, ...),
//! fed from memory and read back with a bound: a bzImage's payload and a
//! compressed module are unpacked from the bytes fslab read and checked,
//! never from their path again, and their unpacked size is never taken on
//! trust (a few bytes of xz can say terabytes).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// How much of a decompressor's stderr an error quotes.
const STDERR_BYTES: u64 = 4096;

/// `input` decompressed by `tool -dc`, at most `max` bytes; `shown` names
/// what is unpacked in messages. More than `max` is an error (exit 2), as
/// is a stream the tool refuses (exit 4) or a tool that is missing (exit 3).
pub fn decompress(tool: &str, input: &[u8], max: u64, shown: &Path) -> Result<Vec<u8>> {
    let mut child = Command::new(tool)
        .arg("-dc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::environment(format!("{tool}: cannot run it ({e}); install it to unpack {}", shown.display())))?;
    let (mut stdin, stdout, stderr) =
        (child.stdin.take().expect("piped"), child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let mut out = Vec::new();
    let (read, said) = std::thread::scope(|s| {
        // A tool that stops reading (it found the stream's end, or was
        // killed) closes the pipe: that is no error of the feeder's.
        s.spawn(move || {
            let _ = stdin.write_all(input);
        });
        let said = s.spawn(move || {
            let mut text = String::new();
            let _ = stderr.take(STDERR_BYTES).read_to_string(&mut text);
            text
        });
        let read = stdout.take(max + 1).read_to_end(&mut out);
        if out.len() as u64 > max {
            let _ = child.kill();
        }
        (read, said.join().unwrap_or_default())
    });
    let status = child.wait().map_err(|e| Error::io(Path::new(tool), "wait for", e))?;
    if out.len() as u64 > max {
        return Err(Error::usage(format!(
            "{}: unpacks to more than {}, more than fslab reads of it",
            shown.display(),
            crate::units::bytes_short(max)
        )));
    }
    read.map_err(|e| Error::io(Path::new(tool), "read the output of", e))?;
    if !status.success() {
        return Err(Error::failed(format!("{tool} -dc could not unpack {}: {}", shown.display(), said.trim())));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xz(bytes: &[u8]) -> Vec<u8> {
        let mut child = Command::new("xz").args(["-c", "--check=crc32"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        child.wait_with_output().unwrap().stdout
    }

    #[test]
    fn a_stream_unpacks_within_its_bound_and_not_past_it() {
        let plain = vec![7u8; 1 << 20];
        let packed = xz(&plain);
        assert!(packed.len() < 1 << 12, "{} bytes", packed.len());
        assert_eq!(decompress("xz", &packed, 1 << 20, Path::new("x.xz")).unwrap(), plain);
        let err = decompress("xz", &packed, (1 << 20) - 1, Path::new("x.xz")).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Usage);
        assert!(err.message.contains("more than 1024 KiB"), "{}", err.message);
        let err = decompress("xz", b"not xz at all", 1 << 20, Path::new("x.xz")).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Failed, "{}", err.message);
    }
}
