//! Archives: downloading one (`archive:` imports) and unpacking `.tar.gz`, `.zip` and the
//! plain tar `git archive` writes. Unpacking refuses what could escape the target folder
//! (absolute paths, `..`, links) and stops at a size cap (a decompression bomb is refused,
//! not unpacked until the disk is full).

use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// Largest download, and largest total of unpacked bytes.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Most entries in one archive.
const MAX_ENTRIES: usize = 20_000;
/// A download that takes longer fails (the URL is named).
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a download failed: the URL could not be reached (exit 4), or it answered with
/// something that is not the archive (exit 2).
pub enum DownloadError {
    Unreachable(String),
    Refused(String),
}

/// GET `url` (with `Authorization: Bearer TOKEN` when a token is given), at most
/// [`MAX_BYTES`]. Runs its own small runtime on a thread of its own: loading packs is
/// synchronous and may happen while another runtime is current.
pub fn download(url: &str, token: Option<&str>) -> Result<Vec<u8>, DownloadError> {
    if url.starts_with("file:") {
        return read_local(url);
    }
    let url = url.to_string();
    let token = token.map(str::to_string);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| DownloadError::Unreachable(format!("no runtime: {e}")))?;
        rt.block_on(get(&url, token.as_deref()))
    })
    .join()
    .unwrap_or_else(|_| {
        Err(DownloadError::Unreachable(
            "the download thread failed".into(),
        ))
    })
}

/// `file://…`: an archive on this machine or a mounted share (air-gapped teams), pinned by
/// its `sha256:` as a downloaded one; whatever is wrong with it is the user's to fix (exit 2).
fn read_local(url: &str) -> Result<Vec<u8>, DownloadError> {
    let path = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(|| {
            DownloadError::Refused("not a local file URL: write `file:///absolute/path`".into())
        })?;
    let meta = fs::metadata(&path)
        .map_err(|e| DownloadError::Refused(format!("cannot read {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(DownloadError::Refused(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    if meta.len() > MAX_BYTES {
        return Err(DownloadError::Refused(format!(
            "larger than {} MiB",
            MAX_BYTES / 1024 / 1024
        )));
    }
    fs::read(&path)
        .map_err(|e| DownloadError::Refused(format!("cannot read {}: {e}", path.display())))
}

async fn get(url: &str, token: Option<&str>) -> Result<Vec<u8>, DownloadError> {
    crate::ground::tls::install_provider();
    let client = reqwest::Client::builder()
        .timeout(DOWNLOAD_TIMEOUT)
        .build()
        .map_err(|e| DownloadError::Unreachable(format!("cannot build the HTTP client: {e}")))?;
    let mut request = client.get(url);
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    // reqwest's error text names the URL; without the token (it travels in a header).
    let mut response = request
        .send()
        .await
        .map_err(|e| DownloadError::Unreachable(error_chain(&e)))?;
    let status = response.status();
    if !status.is_success() {
        let text = format!("HTTP {status}");
        return Err(if status.is_server_error() {
            DownloadError::Unreachable(text)
        } else {
            DownloadError::Refused(text)
        });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| DownloadError::Unreachable(error_chain(&e)))?
    {
        if body.len() as u64 + chunk.len() as u64 > MAX_BYTES {
            return Err(DownloadError::Refused(format!(
                "larger than {} MiB",
                MAX_BYTES / 1024 / 1024
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Unpack a `.tar.gz` or `.zip` (told apart by their first bytes) into `into`.
pub fn unpack(bytes: &[u8], into: &Path) -> Result<(), String> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        untar(flate2::read::GzDecoder::new(bytes), into)
    } else if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        unzip(bytes, into)
    } else {
        Err("not a .tar.gz or .zip archive".into())
    }
}

/// Where an entry named `name` goes under `into`: only plain relative paths.
fn target(into: &Path, name: &Path) -> Result<PathBuf, String> {
    let mut out = into.to_path_buf();
    for c in name.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => {
                return Err(format!(
                    "entry `{}` points outside the archive's folder",
                    name.display()
                ));
            }
        }
    }
    Ok(out)
}

/// Counts entries and bytes against the caps.
struct Budget {
    entries: usize,
    bytes: u64,
}

impl Budget {
    fn new() -> Self {
        Budget {
            entries: 0,
            bytes: 0,
        }
    }

    fn entry(&mut self) -> Result<(), String> {
        self.entries += 1;
        if self.entries > MAX_ENTRIES {
            return Err(format!("more than {MAX_ENTRIES} entries"));
        }
        Ok(())
    }

    /// Copy at most what is left of the byte budget; more is an error.
    fn write(&mut self, mut from: impl Read, to: &Path) -> Result<(), String> {
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let left = MAX_BYTES - self.bytes;
        let mut file = fs::File::create(to).map_err(|e| format!("{}: {e}", to.display()))?;
        let n = io::copy(&mut (&mut from).take(left + 1), &mut file)
            .map_err(|e| format!("{}: {e}", to.display()))?;
        if n > left {
            return Err(format!(
                "unpacks to more than {} MiB",
                MAX_BYTES / 1024 / 1024
            ));
        }
        self.bytes += n;
        Ok(())
    }
}

/// Unpack a tar stream: regular files and folders only.
pub fn untar(reader: impl Read, into: &Path) -> Result<(), String> {
    let mut archive = tar::Archive::new(reader);
    let mut budget = Budget::new();
    let entries = archive.entries().map_err(|e| e.to_string())?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        budget.entry()?;
        let name = entry.path().map_err(|e| e.to_string())?.into_owned();
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            continue;
        }
        let to = target(into, &name)?;
        if kind.is_dir() {
            fs::create_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
        } else if kind.is_file() {
            budget.write(entry, &to)?;
        } else {
            return Err(format!(
                "entry `{}` is a link or special file (a pack holds files only)",
                name.display()
            ));
        }
    }
    Ok(())
}

/// Unpack a zip archive (stored and deflated entries) through the `zip` crate, which reads
/// the central directory, Zip64 and data descriptors and checks each entry's CRC-32; the
/// caps, the path rule and the files-only rule are this module's.
fn unzip(bytes: &[u8], into: &Path) -> Result<(), String> {
    let mut archive = zip::ZipArchive::new(io::Cursor::new(bytes))
        .map_err(|e| format!("not a readable zip archive: {e}"))?;
    let mut budget = Budget::new();
    for i in 0..archive.len() {
        budget.entry()?;
        let entry = archive.by_index_raw(i).map_err(|e| e.to_string())?;
        let name = entry
            .name()
            .map_err(|e| format!("entry {i}: {e}"))?
            .into_owned();
        if entry.encrypted() {
            return Err(format!("entry `{name}` is encrypted"));
        }
        // Unix mode in the high half of the external attributes: a symbolic link is refused.
        if entry.unix_mode().is_some_and(|m| m & 0o170000 == 0o120000) {
            return Err(format!(
                "entry `{name}` is a link or special file (a pack holds files only)"
            ));
        }
        if !matches!(
            entry.compression(),
            zip::CompressionMethod::Stored | zip::CompressionMethod::Deflated
        ) {
            return Err(format!(
                "entry `{name}` uses compression method {}",
                entry.compression()
            ));
        }
        drop(entry);
        let to = target(into, Path::new(&name))?;
        if name.ends_with('/') {
            fs::create_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
            continue;
        }
        let entry = archive
            .by_index(i)
            .map_err(|e| format!("entry `{name}`: {e}"))?;
        budget.write(entry, &to)?;
    }
    Ok(())
}

/// The pack folder inside an unpacked archive: `path:` when given, else the root when it
/// holds `pack.yaml`, else its only folder (archives often wrap everything in one).
pub fn pack_root(root: &Path, path: Option<&str>) -> Result<PathBuf, String> {
    let manifest = crate::language::dsl::discover::MANIFEST;
    if let Some(p) = path {
        let dir = root.join(p);
        return if dir.join(manifest).is_file() {
            Ok(dir)
        } else {
            Err(format!("no {manifest} at `{p}`"))
        };
    }
    if root.join(manifest).is_file() {
        return Ok(root.to_path_buf());
    }
    let entries: Vec<PathBuf> = fs::read_dir(root)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match entries.as_slice() {
        [one] if one.join(manifest).is_file() => Ok(one.clone()),
        _ => Err(format!(
            "no {manifest} at the root or in a single top folder (name the folder with `path:`)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_with(name: &str, kind: tar::EntryType, data: &[u8]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        // Bypass the builder's own path checks: hostile archives are written by hand.
        let bytes = h.as_old_mut().name.as_mut();
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        if kind == tar::EntryType::Symlink {
            h.set_link_name("/etc").unwrap();
        }
        h.set_cksum();
        b.append(&h, data).unwrap();
        b.into_inner().unwrap()
    }

    #[test]
    fn hostile_entries_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (name, kind) in [
            ("../evil.yaml", tar::EntryType::Regular),
            ("/abs.yaml", tar::EntryType::Regular),
            ("link", tar::EntryType::Symlink),
        ] {
            let t = tar_with(name, kind, b"x");
            let e = untar(&t[..], dir.path()).unwrap_err();
            assert!(
                e.contains(name.trim_start_matches('/')) || e.contains("link"),
                "{e}"
            );
        }
        assert!(!dir.path().parent().unwrap().join("evil.yaml").exists());
        let ok = tar_with("pack.yaml", tar::EntryType::Regular, b"x");
        untar(&ok[..], dir.path()).unwrap();
        assert_eq!(fs::read(dir.path().join("pack.yaml")).unwrap(), b"x");
    }

    /// A zip of `(name, data, deflated)` entries, regular files of mode 644.
    fn zip(entries: &[(&str, &[u8], bool)]) -> Vec<u8> {
        use std::io::Write;
        let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        for (name, data, deflate) in entries {
            let method = if *deflate {
                zip::CompressionMethod::Deflated
            } else {
                zip::CompressionMethod::Stored
            };
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(method)
                .unix_permissions(0o644);
            w.start_file(*name, options).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn a_zip_entry_whose_crc_is_wrong_is_refused() {
        let mut z = zip(&[("pack.yaml", b"name: p\n", false)]);
        // The stored entry's data follows its 30-byte local header and its name.
        let at = 30 + "pack.yaml".len();
        assert_eq!(&z[at..at + 4], b"name");
        z[at] = b'N';
        let dir = tempfile::tempdir().unwrap();
        let e = unpack(&z, dir.path()).unwrap_err();
        assert!(
            e.to_lowercase().contains("checksum") || e.contains("CRC"),
            "{e}"
        );
    }

    #[test]
    fn a_zip_symlink_is_refused() {
        use std::io::Write;
        let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        w.add_symlink(
            "link",
            "/etc/passwd",
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
        w.start_file("pack.yaml", zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(b"x").unwrap();
        let z = w.finish().unwrap().into_inner();
        let dir = tempfile::tempdir().unwrap();
        let e = unpack(&z, dir.path()).unwrap_err();
        assert!(e.contains("link or special file"), "{e}");
    }

    #[test]
    fn zip_archives_unpack_and_traversal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let z = zip(&[
            ("p/pack.yaml", b"name: p\n", true),
            ("p/s.yaml", b"scenario: s\n", false),
        ]);
        unpack(&z, dir.path()).unwrap();
        assert_eq!(
            fs::read(dir.path().join("p/pack.yaml")).unwrap(),
            b"name: p\n"
        );
        assert_eq!(
            fs::read(dir.path().join("p/s.yaml")).unwrap(),
            b"scenario: s\n"
        );
        assert_eq!(pack_root(dir.path(), None).unwrap(), dir.path().join("p"));
        let evil = zip(&[("../evil.yaml", b"x", false)]);
        let other = tempfile::tempdir().unwrap();
        let e = unpack(&evil, &other.path().join("in")).unwrap_err();
        assert!(e.contains("outside"), "{e}");
        assert!(!other.path().join("evil.yaml").exists());
    }

    #[test]
    fn a_decompression_bomb_stops_at_the_cap() {
        use std::io::Write;
        // A gzip of zeros whose tar header claims more than the cap.
        let mut h = tar::Header::new_gnu();
        h.set_path("big").unwrap();
        h.set_size(MAX_BYTES + 10);
        h.set_mode(0o644);
        h.set_cksum();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(h.as_bytes()).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..(MAX_BYTES >> 20) + 1 {
            gz.write_all(&zeros).unwrap();
        }
        let bomb = gz.finish().unwrap();
        assert!(bomb.len() < 1 << 20, "the archive itself is small");
        let dir = tempfile::tempdir().unwrap();
        let e = unpack(&bomb, dir.path()).unwrap_err();
        assert!(e.contains("more than 64 MiB"), "{e}");
    }
}
