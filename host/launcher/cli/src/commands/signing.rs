//! `rocwasm plugin keygen|sign|verify`: ed25519 signatures embedded in the
//! component (`rocwasm_policy::signature` says what is signed and why the
//! signature travels inside the file). Key ids are printed so admins can
//! list them in the site policy and find them in audit lines.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rocwasm_policy::{sign as sign_bytes, PublicKey, SecretKey, Signatures};

use crate::failure::{Failure, Result};

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
}

fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
}

/// `KEY.pub` next to `KEY`.
fn public_path(key: &Path) -> PathBuf {
    let mut name = key.as_os_str().to_owned();
    name.push(".pub");
    PathBuf::from(name)
}

pub fn keygen(out: &Path) -> Result {
    let key = SecretKey::generate().map_err(Failure::runtime)?;
    let public = public_path(out);
    for p in [out, public.as_path()] {
        if p.exists() {
            return Err(Failure::usage(format!(
                "{} exists; not overwriting a key",
                p.display()
            )));
        }
    }
    // The secret key is readable by its owner only, from its first byte.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(out)
        .map_err(|e| Failure::runtime(format!("{}: {e}", out.display())))?;
    file.write_all(key.to_file_text().as_bytes())
        .map_err(|e| Failure::runtime(format!("{}: {e}", out.display())))?;
    std::fs::write(&public, key.public().to_file_text())
        .map_err(|e| Failure::runtime(format!("{}: {e}", public.display())))?;
    println!("key id:  {}", key.public().id());
    println!(
        "secret:  {} (mode 0600; keep it off shared nodes)",
        out.display()
    );
    println!("public:  {}", public.display());
    Ok(())
}

pub fn sign(key: &Path, file: &Path) -> Result {
    let key = SecretKey::parse(&read_text(key)?)
        .map_err(|e| Failure::usage(format!("{}: {e}", key.display())))?;
    let wasm = read(file)?;
    let signed =
        sign_bytes(&wasm, &key).map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    // Through a temporary file, so a reader never sees half a component.
    let tmp = file.with_extension("wasm.signing");
    std::fs::write(&tmp, &signed)
        .and_then(|()| std::fs::rename(&tmp, file))
        .map_err(|e| Failure::runtime(format!("{}: {e}", file.display())))?;
    let digest = Signatures::of(&signed)
        .map(|s| s.digest.to_string())
        .unwrap_or_default();
    println!("signed:  {}", file.display());
    println!("key id:  {}", key.public().id());
    println!("digest:  {digest}");
    Ok(())
}

pub fn verify(public: &[PathBuf], file: &Path) -> Result {
    let mut keys = Vec::new();
    for p in public {
        keys.push(
            PublicKey::parse(&read_text(p)?)
                .map_err(|e| Failure::usage(format!("{}: {e}", p.display())))?,
        );
    }
    let wasm = read(file)?;
    let signatures =
        Signatures::of(&wasm).map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    println!("digest:  {}", signatures.digest);
    for k in &signatures.valid {
        println!("signer:  {} (valid)", k.id());
    }
    for id in &signatures.invalid {
        println!("signer:  {id} (INVALID: the component changed after signing)");
    }
    match signatures.trusted_signer(&keys) {
        Ok(id) => {
            println!("ok: {} is signed by trusted key {id}", file.display());
            Ok(())
        }
        Err(e) => Err(Failure::runtime(format!("{}: {e}", file.display()))),
    }
}
