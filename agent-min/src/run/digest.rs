//! SHA-256 digests in hex: what an approval records of what it covers (a hook's script, the
//! workspace's MCP settings and the programs they start), so that a changed file is asked about
//! again.

use sha2::{Digest, Sha256};

/// The SHA-256 of `bytes`, in lowercase hex.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The SHA-256 of all that `reader` yields, in lowercase hex, read in pieces (a server's binary
/// may be large).
pub(crate) fn sha256_of(mut reader: impl std::io::Read) -> std::io::Result<String> {
    let (mut hasher, mut buf) = (Sha256::new(), vec![0u8; 1 << 16]);
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(hex(&hasher.finalize())),
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// `bytes` in lowercase hex, two digits each.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)] as char, DIGITS[usize::from(b & 15)] as char]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_of_bytes_and_of_a_reader_agree_with_the_standard_vectors() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256(b"abc"), abc);
        assert_eq!(sha256_of(&b"abc"[..]).unwrap(), abc);
        // More than one piece: a million `a`s (FIPS 180-2's third vector).
        let million = vec![b'a'; 1_000_000];
        let want = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
        assert_eq!(sha256_of(&million[..]).unwrap(), want);
        assert_eq!(sha256(&million), want);
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
    }
}
