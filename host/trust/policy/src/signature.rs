//! Plugin signatures: ed25519 over the component's digest, carried inside
//! the component.
//!
//! # What is signed
//!
//! The **plugin digest** is the SHA-256 of the component's bytes with every
//! top-level `rocwasm-signature` custom section removed, written
//! `sha256:<hex>`. It covers everything but the signatures: any other byte
//! changed anywhere (code, imports, other custom sections, the order of
//! sections) changes it. A signature is ed25519 (RustCrypto's
//! `ed25519-dalek`, strict verification) over the message
//! `"rocwasm plugin signature v1\0" ‖ digest`; the prefix keeps a plugin
//! signature from ever being valid for anything else signed by the same key.
//!
//! # Where the signature lives
//!
//! In the component itself, as a top-level custom section named
//! `rocwasm-signature` appended at the end: the file travels alone (copied
//! to a node, pushed to a registry, cached) and cannot lose its signature
//! on the way, and runtimes ignore custom sections, so a signed component
//! loads anywhere an unsigned one does. Several signatures (co-signing by a
//! developer and a site admin) are several sections over the same digest.
//! A detached `.sig` file was the alternative; it is easier to lose or to
//! pair with the wrong file, which is the failure this feature exists to
//! prevent. The section's payload: a version byte (1), the signer's 32-byte
//! public key, the 64-byte signature.
//!
//! # Keys
//!
//! `KEY` holds `rocwasm-ed25519-secret-key-v1 <64 hex digits>` (the seed;
//! written with mode 0600), `KEY.pub` holds `rocwasm-ed25519-public-key-v1
//! <64 hex digits> <key id>`. The **key id** is the first 8 bytes of the
//! SHA-256 of the public key, in hex: short enough to print and record,
//! long enough that two keys of a site never share one.

use std::fmt;

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use sha2::{Digest as _, Sha256};

/// The custom section that carries a signature.
pub const SECTION: &str = "rocwasm-signature";
/// Prefixed to the digest before signing (domain separation).
const CONTEXT: &[u8] = b"rocwasm plugin signature v1\0";
/// The section payload's version byte.
const PAYLOAD_VERSION: u8 = 1;
const SECRET_TAG: &str = "rocwasm-ed25519-secret-key-v1";
const PUBLIC_TAG: &str = "rocwasm-ed25519-public-key-v1";

/// Why a key, a component or a signature was not accepted.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum SignatureError {
    /// The bytes are not a Wasm module or component.
    #[error("not a WebAssembly file: {0}")]
    NotWasm(String),
    /// A key file does not hold a key of ours.
    #[error("not a rocwasm {0} key file (expected a line starting with `{1}`)")]
    KeyFile(&'static str, &'static str),
    /// A `rocwasm-signature` section that cannot be read.
    #[error("a {SECTION} section is malformed: {0}")]
    Malformed(String),
    /// A signature does not verify against the component.
    #[error(
        "the signature by key {0} does not match the component (it was changed after signing)"
    )]
    Invalid(KeyId),
    /// No signature at all.
    #[error("the component is not signed")]
    Unsigned,
    /// Signed, but by none of the keys asked for.
    #[error("signed by {signers} but by none of the trusted keys ({trusted})")]
    Untrusted {
        /// The key ids that signed it.
        signers: String,
        /// The key ids that were trusted.
        trusted: String,
    },
    /// The OS gave no random bytes for a new key.
    #[error("no randomness for a new key: {0}")]
    Random(String),
}

/// A key id: the first 8 bytes of the SHA-256 of the public key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyId(pub [u8; 8]);

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

/// A signer's public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    /// The key's id.
    pub fn id(&self) -> KeyId {
        let hash = Sha256::digest(self.0.as_bytes());
        let mut id = [0; 8];
        id.copy_from_slice(&hash[..8]);
        KeyId(id)
    }

    /// The `KEY.pub` file's text.
    pub fn to_file_text(&self) -> String {
        format!(
            "{PUBLIC_TAG} {} {}\n",
            hex::encode(self.0.as_bytes()),
            self.id()
        )
    }

    /// Reads a `KEY.pub` file's text (the key id, when present, must match).
    pub fn parse(text: &str) -> Result<PublicKey, SignatureError> {
        let bad = SignatureError::KeyFile("public", PUBLIC_TAG);
        let mut words = text.split_whitespace();
        if words.next() != Some(PUBLIC_TAG) {
            return Err(bad);
        }
        let bytes: [u8; 32] = words
            .next()
            .and_then(|h| hex::decode(h).ok())
            .and_then(|b| b.try_into().ok())
            .ok_or(bad.clone())?;
        let key = PublicKey(VerifyingKey::from_bytes(&bytes).map_err(|_| bad.clone())?);
        match words.next() {
            Some(id) if id != key.id().to_string() => Err(bad),
            _ => Ok(key),
        }
    }
}

/// A signer's secret key.
pub struct SecretKey(SigningKey);

impl SecretKey {
    /// A new key from the operating system's random source.
    pub fn generate() -> Result<SecretKey, SignatureError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| SignatureError::Random(e.to_string()))?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// Its public half.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// The `KEY` file's text.
    pub fn to_file_text(&self) -> String {
        format!("{SECRET_TAG} {}\n", hex::encode(self.0.to_bytes()))
    }

    /// Reads a `KEY` file's text.
    pub fn parse(text: &str) -> Result<SecretKey, SignatureError> {
        let bad = SignatureError::KeyFile("secret", SECRET_TAG);
        let mut words = text.split_whitespace();
        if words.next() != Some(SECRET_TAG) {
            return Err(bad);
        }
        let seed: [u8; 32] = words
            .next()
            .and_then(|h| hex::decode(h).ok())
            .and_then(|b| b.try_into().ok())
            .ok_or(bad)?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }
}

/// A plugin digest, `sha256:<hex>` when displayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PluginDigest(pub [u8; 32]);

impl fmt::Display for PluginDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", hex::encode(self.0))
    }
}

impl PluginDigest {
    /// Reads `sha256:<64 hex digits>` (the prefix may be left out).
    pub fn parse(text: &str) -> Option<PluginDigest> {
        let hex_part = text.strip_prefix("sha256:").unwrap_or(text);
        let bytes: [u8; 32] = hex::decode(hex_part).ok()?.try_into().ok()?;
        Some(PluginDigest(bytes))
    }
}

/// What a component's signatures say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signatures {
    /// The plugin digest (everything but the signatures).
    pub digest: PluginDigest,
    /// Keys whose signature verifies, in file order.
    pub valid: Vec<PublicKey>,
    /// Key ids whose signature does not verify: the component was changed
    /// after they signed it.
    pub invalid: Vec<KeyId>,
}

impl Signatures {
    /// Reads and checks every signature of `wasm`.
    pub fn of(wasm: &[u8]) -> Result<Signatures, SignatureError> {
        let (unsigned, payloads) = split(wasm)?;
        let digest = PluginDigest(Sha256::digest(&unsigned).into());
        let message = message(&digest);
        let mut valid = Vec::new();
        let mut invalid = Vec::new();
        for payload in payloads {
            let (key, signature) = decode_payload(payload)?;
            if key.0.verify_strict(&message, &signature).is_ok() {
                valid.push(key);
            } else {
                invalid.push(key.id());
            }
        }
        Ok(Signatures {
            digest,
            valid,
            invalid,
        })
    }

    /// The signer among `trusted`, when the component verifies: any
    /// signature that does not verify refuses the component (it was
    /// changed after signing), whoever made it.
    pub fn trusted_signer(&self, trusted: &[PublicKey]) -> Result<KeyId, SignatureError> {
        if let Some(id) = self.invalid.first() {
            return Err(SignatureError::Invalid(*id));
        }
        if self.valid.is_empty() {
            return Err(SignatureError::Unsigned);
        }
        self.valid
            .iter()
            .find(|k| trusted.contains(k))
            .map(PublicKey::id)
            .ok_or_else(|| SignatureError::Untrusted {
                signers: ids(self.valid.iter().map(PublicKey::id)),
                trusted: if trusted.is_empty() {
                    "none".into()
                } else {
                    ids(trusted.iter().map(PublicKey::id))
                },
            })
    }
}

fn ids(keys: impl Iterator<Item = KeyId>) -> String {
    keys.map(|k| k.to_string()).collect::<Vec<_>>().join(", ")
}

/// `wasm` with one more signature, by `key`, over its digest. A signature
/// by the same key already there is replaced.
pub fn sign(wasm: &[u8], key: &SecretKey) -> Result<Vec<u8>, SignatureError> {
    let (unsigned, payloads) = split(wasm)?;
    let digest = PluginDigest(Sha256::digest(&unsigned).into());
    let signature = key.0.sign(&message(&digest));
    let public = key.public();
    let mut out = unsigned;
    for payload in payloads {
        if decode_payload(payload)?.0 != public {
            append_section(&mut out, payload);
        }
    }
    let mut payload = vec![PAYLOAD_VERSION];
    payload.extend_from_slice(public.0.as_bytes());
    payload.extend_from_slice(&signature.to_bytes());
    append_section(&mut out, &payload);
    Ok(out)
}

fn message(digest: &PluginDigest) -> Vec<u8> {
    [CONTEXT, &digest.0].concat()
}

fn decode_payload(payload: &[u8]) -> Result<(PublicKey, Signature), SignatureError> {
    if payload.len() != 1 + 32 + 64 || payload[0] != PAYLOAD_VERSION {
        return Err(SignatureError::Malformed(format!(
            "{} byte(s), version {}",
            payload.len(),
            payload.first().copied().unwrap_or(0)
        )));
    }
    let key: [u8; 32] = payload[1..33].try_into().expect("length checked");
    let sig: [u8; 64] = payload[33..].try_into().expect("length checked");
    let key = VerifyingKey::from_bytes(&key)
        .map_err(|_| SignatureError::Malformed("not an ed25519 public key".into()))?;
    Ok((PublicKey(key), Signature::from_bytes(&sig)))
}

/// The component without its signature sections, and their payloads.
///
/// Hand-written rather than `wasmparser`: the top-level framing (an 8-byte
/// preamble, then `id:u8 size:u32-LEB128 payload` repeated) is all that is
/// needed, and wasmparser reports a custom section's payload range but not
/// where its header starts, which is what removing it needs. Nothing inside
/// a section is interpreted here; the engine validates the rest.
fn split(wasm: &[u8]) -> Result<(Vec<u8>, Vec<&[u8]>), SignatureError> {
    if wasm.len() < 8 || &wasm[..4] != b"\0asm" {
        return Err(SignatureError::NotWasm(
            "it does not start with the `\\0asm` preamble".into(),
        ));
    }
    let mut out = wasm[..8].to_vec();
    let mut payloads = Vec::new();
    let mut at = 8;
    while at < wasm.len() {
        let start = at;
        let id = wasm[at];
        at += 1;
        let size = leb_u32(wasm, &mut at)? as usize;
        let end = at
            .checked_add(size)
            .filter(|&e| e <= wasm.len())
            .ok_or_else(|| {
                SignatureError::NotWasm(format!("section at byte {start} runs past the end"))
            })?;
        let mut signature = None;
        if id == 0 {
            let mut p = at;
            let len = leb_u32(&wasm[..end], &mut p)? as usize;
            if wasm.get(p..p + len) == Some(SECTION.as_bytes()) {
                signature = Some(&wasm[p + len..end]);
            }
        }
        match signature {
            Some(payload) => payloads.push(payload),
            None => out.extend_from_slice(&wasm[start..end]),
        }
        at = end;
    }
    Ok((out, payloads))
}

/// Reads an unsigned LEB128 `u32` at `*at` and advances past it.
fn leb_u32(bytes: &[u8], at: &mut usize) -> Result<u32, SignatureError> {
    let mut value: u64 = 0;
    for shift in 0..5 {
        let b = *bytes
            .get(*at)
            .ok_or_else(|| SignatureError::NotWasm("truncated section header".into()))?;
        *at += 1;
        value |= u64::from(b & 0x7f) << (7 * shift);
        if b & 0x80 == 0 {
            return u32::try_from(value)
                .map_err(|_| SignatureError::NotWasm("section size overflows".into()));
        }
    }
    Err(SignatureError::NotWasm("section size too long".into()))
}

fn leb_push(out: &mut Vec<u8>, mut v: u32) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Appends a `rocwasm-signature` custom section holding `payload`.
fn append_section(out: &mut Vec<u8>, payload: &[u8]) {
    let mut body = Vec::new();
    leb_push(&mut body, SECTION.len() as u32);
    body.extend_from_slice(SECTION.as_bytes());
    body.extend_from_slice(payload);
    out.push(0);
    leb_push(out, body.len() as u32);
    out.extend_from_slice(&body);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty core module and an empty component (layer 1), each with a
    /// custom section of their own so the signed part is not trivial.
    fn samples() -> Vec<Vec<u8>> {
        let mut module = b"\0asm\x01\0\0\0".to_vec();
        append_named(&mut module, "producers", b"rust");
        let mut component = b"\0asm\x0d\0\x01\0".to_vec();
        append_named(&mut component, "name", b"\0\x04demo");
        vec![module, component]
    }

    fn append_named(out: &mut Vec<u8>, name: &str, data: &[u8]) {
        let mut body = Vec::new();
        leb_push(&mut body, name.len() as u32);
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(data);
        out.push(0);
        leb_push(out, body.len() as u32);
        out.extend_from_slice(&body);
    }

    #[test]
    fn sign_then_verify_round_trips_and_keeps_the_digest() {
        let key = SecretKey::generate().unwrap();
        for wasm in samples() {
            let before = Signatures::of(&wasm).unwrap();
            assert!(before.valid.is_empty());
            let signed = sign(&wasm, &key).unwrap();
            let after = Signatures::of(&signed).unwrap();
            assert_eq!(
                after.digest, before.digest,
                "signing changes no signed byte"
            );
            assert_eq!(after.valid, vec![key.public()]);
            assert_eq!(after.trusted_signer(&[key.public()]), Ok(key.public().id()));
            // Signing again with the same key replaces, never duplicates.
            let twice = sign(&signed, &key).unwrap();
            assert_eq!(Signatures::of(&twice).unwrap().valid.len(), 1);
        }
    }

    #[test]
    fn a_one_byte_change_anywhere_fails() {
        let key = SecretKey::generate().unwrap();
        for wasm in samples() {
            let signed = sign(&wasm, &key).unwrap();
            for i in 0..signed.len() {
                let mut bad = signed.clone();
                bad[i] ^= 0x01;
                let ok = Signatures::of(&bad)
                    .ok()
                    .and_then(|s| s.trusted_signer(&[key.public()]).ok());
                assert_eq!(
                    ok,
                    None,
                    "byte {i} of {} changed and still verifies",
                    bad.len()
                );
            }
        }
    }

    #[test]
    fn an_untrusted_signer_is_named() {
        let (ours, theirs) = (
            SecretKey::generate().unwrap(),
            SecretKey::generate().unwrap(),
        );
        let signed = sign(&samples()[1], &theirs).unwrap();
        let e = Signatures::of(&signed)
            .unwrap()
            .trusted_signer(&[ours.public()])
            .unwrap_err();
        let text = e.to_string();
        assert!(text.contains(&theirs.public().id().to_string()), "{text}");
        assert!(text.contains(&ours.public().id().to_string()), "{text}");
        assert_eq!(
            Signatures::of(&samples()[1])
                .unwrap()
                .trusted_signer(&[ours.public()]),
            Err(SignatureError::Unsigned)
        );
    }

    #[test]
    fn co_signatures_accumulate() {
        let (a, b) = (
            SecretKey::generate().unwrap(),
            SecretKey::generate().unwrap(),
        );
        let signed = sign(&sign(&samples()[0], &a).unwrap(), &b).unwrap();
        let s = Signatures::of(&signed).unwrap();
        assert_eq!(s.valid, vec![a.public(), b.public()]);
        assert_eq!(s.trusted_signer(&[b.public()]), Ok(b.public().id()));
    }

    #[test]
    fn key_files_round_trip_and_refuse_garbage() {
        let key = SecretKey::generate().unwrap();
        let again = SecretKey::parse(&key.to_file_text()).unwrap();
        assert_eq!(again.public(), key.public());
        let public = PublicKey::parse(&key.public().to_file_text()).unwrap();
        assert_eq!(public, key.public());
        assert!(PublicKey::parse(&key.to_file_text()).is_err());
        assert!(SecretKey::parse("hello").is_err());
        // A key id that does not belong to the key.
        let text = key.public().to_file_text();
        let wrong = text.replace(&key.public().id().to_string(), "0000000000000000");
        assert!(PublicKey::parse(&wrong).is_err());
        assert_eq!(key.public().id().to_string().len(), 16);
    }

    #[test]
    fn not_wasm_is_an_error_not_a_panic() {
        assert!(matches!(
            Signatures::of(b"ELF"),
            Err(SignatureError::NotWasm(_))
        ));
        let mut cut = samples()[0].clone();
        cut.truncate(cut.len() - 1);
        assert!(matches!(
            Signatures::of(&cut),
            Err(SignatureError::NotWasm(_))
        ));
    }
}
