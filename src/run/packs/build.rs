//! `mcpspec pack build DIR`: a pack as a reproducible `.tar.gz`. The same files give the
//! same bytes on any machine (entries sorted, mtime 0, owner 0, fixed modes, gzip header
//! without time or name), so the printed sha256 is what importers pin with `sha256:`.

use std::io::Write;
use std::path::Path;

/// `pack:` imports of the manifest in `dir` that lie outside the folder (`pack: ../shared`):
/// the archive holds the folder only, so whoever imports it would get "no pack ../shared".
/// Each is an error at its position, saying what to do instead.
pub fn outside_imports(dir: &Path) -> Result<(), crate::ground::load_error::LoadErrors> {
    use crate::ground::load_error::{LoadError, LoadErrors};
    let file = crate::ground::load_error::read_source(
        &dir.join(crate::language::dsl::discover::MANIFEST),
    )?;
    let doc: crate::language::dsl::document::PackDoc = crate::ground::yaml::parse(&file)?;
    let root = dir.canonicalize().map_err(|e| {
        LoadErrors::from(LoadError::file(
            dir.display().to_string(),
            format!("cannot read: {e}"),
        ))
    })?;
    let mut errors = LoadErrors::default();
    for import in &doc.imports {
        let Some(p) = &import.pack else { continue };
        let target = dir.join(p.as_str());
        let inside = target.canonicalize().is_ok_and(|t| t.starts_with(&root));
        if !inside && target.exists() {
            errors.push(
                LoadError::at(
                    crate::ground::source::Pos::new(&file, p.line, p.col),
                    format!(
                        "`pack: {}` lies outside the pack's folder: the archive holds the folder \
                         only, so no importer could load it",
                        p.value
                    ),
                )
                .with_help(
                    "move the imported pack inside this folder, or publish it too and import it \
                     with `git:` or `archive:`",
                ),
            );
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The archive of the pack folder `dir`, and how many files it holds. Hidden files and
/// folders (`.git`, `.DS_Store`) are left out; a symbolic link is an error.
pub fn archive(dir: &Path) -> Result<(Vec<u8>, usize), String> {
    let mut files = Vec::new();
    super::cache::walk(dir, "", &mut files).map_err(|e| format!("{}: {e}", dir.display()))?;
    files.retain(|rel| !rel.split('/').any(|part| part.starts_with('.')));
    files.sort();
    let gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    for rel in &files {
        let data = std::fs::read(dir.join(rel)).map_err(|e| format!("{rel}: {e}"))?;
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        tar.append_data(&mut header, rel, &data[..])
            .map_err(|e| format!("{rel}: {e}"))?;
    }
    let gz = tar.into_inner().map_err(|e| e.to_string())?;
    let mut bytes = gz.finish().map_err(|e| e.to_string())?;
    bytes.flush().map_err(|e| e.to_string())?;
    Ok((bytes, files.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_files_give_the_same_bytes() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        // Written in different orders, at different times.
        std::fs::create_dir_all(a.path().join("s")).unwrap();
        std::fs::write(a.path().join("pack.yaml"), "name: p\n").unwrap();
        std::fs::write(a.path().join("s/one.yaml"), "x").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        std::fs::create_dir_all(b.path().join("s")).unwrap();
        std::fs::write(b.path().join("s/one.yaml"), "x").unwrap();
        std::fs::write(b.path().join("pack.yaml"), "name: p\n").unwrap();
        std::fs::create_dir_all(b.path().join(".git")).unwrap();
        std::fs::write(b.path().join(".git/HEAD"), "ref").unwrap();
        let (one, n) = archive(a.path()).unwrap();
        let (two, _) = archive(b.path()).unwrap();
        assert_eq!(n, 2);
        assert_eq!(one, two);
        // And it unpacks to the same tree.
        let out = tempfile::tempdir().unwrap();
        super::super::archive::unpack(&one, out.path()).unwrap();
        assert_eq!(
            super::super::cache::tree_digest(out.path()).unwrap(),
            super::super::cache::tree_digest(a.path()).unwrap()
        );
    }
}
