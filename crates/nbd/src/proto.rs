//! The NBD wire protocol: constants and pure parsers and encoders (no IO), so
//! that the parsers can be fuzzed on their own.
//!
//! What we speak (our reading of the NBD project's `doc/proto.md`): the fixed
//! newstyle handshake only (no oldstyle, no TLS), options `NBD_OPT_EXPORT_NAME`,
//! `NBD_OPT_ABORT`, `NBD_OPT_LIST`, `NBD_OPT_INFO` and `NBD_OPT_GO` (every other
//! option gets `NBD_REP_ERR_UNSUP`), simple replies only (structured replies and
//! extended headers are declined, which every client must accept), and the
//! commands READ, WRITE, DISC, FLUSH, TRIM and WRITE_ZEROES with the FUA and
//! NO_HOLE flags. All integers are big-endian.

/// "NBDMAGIC": first 8 bytes the server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// "IHAVEOPT": second server magic, and the magic of every option the client sends.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// Magic of option replies.
pub const REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Magic of transmission requests.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Magic of simple replies.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

// Handshake flags (server) and client flags.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

// Transmission flags.
pub const TFLAG_HAS_FLAGS: u16 = 1 << 0;
pub const TFLAG_READ_ONLY: u16 = 1 << 1;
pub const TFLAG_SEND_FLUSH: u16 = 1 << 2;
pub const TFLAG_SEND_FUA: u16 = 1 << 3;
pub const TFLAG_ROTATIONAL: u16 = 1 << 4;
pub const TFLAG_SEND_TRIM: u16 = 1 << 5;
pub const TFLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const TFLAG_CAN_MULTI_CONN: u16 = 1 << 8;

// Options.
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;

// Option reply types.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
pub const REP_ERR_POLICY: u32 = (1 << 31) + 2;
pub const REP_ERR_INVALID: u32 = (1 << 31) + 3;
pub const REP_ERR_PLATFORM: u32 = (1 << 31) + 4;
pub const REP_ERR_TLS_REQD: u32 = (1 << 31) + 5;
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) + 6;
pub const REP_ERR_SHUTDOWN: u32 = (1 << 31) + 7;
pub const REP_ERR_BLOCK_SIZE_REQD: u32 = (1 << 31) + 8;
pub const REP_ERR_TOO_BIG: u32 = (1 << 31) + 9;

// Information types (NBD_OPT_INFO / NBD_OPT_GO).
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

// Commands.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_CACHE: u16 = 5;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const CMD_BLOCK_STATUS: u16 = 7;

// Command flags.
pub const CMD_FLAG_FUA: u16 = 1 << 0;
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;
pub const CMD_FLAG_DF: u16 = 1 << 2;
pub const CMD_FLAG_REQ_ONE: u16 = 1 << 3;
pub const CMD_FLAG_FAST_ZERO: u16 = 1 << 4;

// Errors in replies.
pub const EPERM: u32 = 1;
pub const EIO: u32 = 5;
pub const ENOMEM: u32 = 12;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const EOVERFLOW: u32 = 75;
pub const ENOTSUP: u32 = 95;
pub const ESHUTDOWN: u32 = 108;

/// Longest option payload we accept; a longer one is a protocol abuse and the
/// connection is dropped (export names are at most 4096 bytes by the spec).
pub const MAX_OPTION_BYTES: u32 = 64 * 1024;
/// Most options one connection may send before we hang up (denial of service).
pub const MAX_OPTIONS: u32 = 1024;
/// Size constraints we advertise: minimum block (the simulator's sector),
/// preferred block, maximum payload.
pub const MIN_BLOCK: u32 = 512;
pub const PREFERRED_BLOCK: u32 = 4096;
pub const MAX_PAYLOAD: u32 = 32 * 1024 * 1024;

/// Length of a request header.
pub const REQUEST_BYTES: usize = 28;

/// A protocol violation that ends the connection (hard disconnect).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation(pub String);

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The header of a client option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionHeader {
    pub option: u32,
    pub length: u32,
}

pub fn parse_option_header(b: &[u8; 16]) -> Result<OptionHeader, Violation> {
    let magic = u64::from_be_bytes(b[0..8].try_into().unwrap());
    if magic != IHAVEOPT {
        return Err(Violation(format!(
            "option magic {magic:#x} is not IHAVEOPT"
        )));
    }
    let option = u32::from_be_bytes(b[8..12].try_into().unwrap());
    let length = u32::from_be_bytes(b[12..16].try_into().unwrap());
    if length > MAX_OPTION_BYTES {
        return Err(Violation(format!(
            "option {option} of {length} bytes is too long"
        )));
    }
    Ok(OptionHeader { option, length })
}

/// The data of `NBD_OPT_INFO` / `NBD_OPT_GO`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InfoRequest {
    pub name: Vec<u8>,
    pub requests: Vec<u16>,
}

/// Why INFO/GO data is malformed; its text is the message of the
/// server's `NBD_REP_ERR_INVALID` reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InfoRequestError {
    /// Less than the name length and the request count.
    Short { bytes: usize },
    /// The name length runs past the option data.
    NameOverrun { name_len: usize },
    /// The request count does not match the bytes that follow.
    CountMismatch { announced: usize, bytes: usize },
}

impl std::fmt::Display for InfoRequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InfoRequestError::Short { .. } => f.write_str("INFO/GO data shorter than 6 bytes"),
            InfoRequestError::NameOverrun { .. } => {
                f.write_str("INFO/GO name length runs past the option data")
            }
            InfoRequestError::CountMismatch { announced, bytes } => write!(
                f,
                "INFO/GO announces {announced} information requests but carries {bytes} bytes"
            ),
        }
    }
}

impl std::error::Error for InfoRequestError {}

/// Parse INFO/GO data; `Err` means the server answers `NBD_REP_ERR_INVALID`.
pub fn parse_info_request(data: &[u8]) -> Result<InfoRequest, InfoRequestError> {
    if data.len() < 6 {
        return Err(InfoRequestError::Short { bytes: data.len() });
    }
    let name_len = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
    if name_len > data.len() - 6 {
        return Err(InfoRequestError::NameOverrun { name_len });
    }
    let name = data[4..4 + name_len].to_vec();
    let rest = &data[4 + name_len..];
    let n = u16::from_be_bytes([rest[0], rest[1]]) as usize;
    let items = &rest[2..];
    if items.len() != 2 * n {
        return Err(InfoRequestError::CountMismatch {
            announced: n,
            bytes: items.len(),
        });
    }
    let requests = items
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    Ok(InfoRequest { name, requests })
}

/// A transmission request header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub flags: u16,
    pub kind: u16,
    pub cookie: u64,
    pub offset: u64,
    pub length: u32,
}

pub fn parse_request(b: &[u8; REQUEST_BYTES]) -> Result<Request, Violation> {
    let magic = u32::from_be_bytes(b[0..4].try_into().unwrap());
    if magic != REQUEST_MAGIC {
        return Err(Violation(format!(
            "request magic {magic:#x} is not {REQUEST_MAGIC:#x}"
        )));
    }
    Ok(Request {
        flags: u16::from_be_bytes([b[4], b[5]]),
        kind: u16::from_be_bytes([b[6], b[7]]),
        cookie: u64::from_be_bytes(b[8..16].try_into().unwrap()),
        offset: u64::from_be_bytes(b[16..24].try_into().unwrap()),
        length: u32::from_be_bytes(b[24..28].try_into().unwrap()),
    })
}

/// What the server does with a request after checking it against the export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    Read {
        offset: u64,
        length: u32,
    },
    Write {
        offset: u64,
        length: u32,
        fua: bool,
    },
    Flush,
    Trim {
        offset: u64,
        length: u32,
        fua: bool,
    },
    WriteZeroes {
        offset: u64,
        length: u32,
        fua: bool,
        no_hole: bool,
    },
    Disconnect,
    /// Reply with this error. For a WRITE the payload (if not too large) is
    /// still read and discarded to stay in step with the client.
    Error(u32),
}

/// Check a request against an export of `size` bytes. `Err` is a violation
/// after which the connection cannot continue (a write whose payload is larger
/// than we are willing to read and skip).
pub fn check_request(r: &Request, size: u64) -> Result<Checked, Violation> {
    let fua = r.flags & CMD_FLAG_FUA != 0;
    let range = || -> Result<(), u32> {
        if !r.offset.is_multiple_of(MIN_BLOCK as u64)
            || !r.length.is_multiple_of(MIN_BLOCK)
            || r.length == 0
        {
            return Err(EINVAL);
        }
        match r.offset.checked_add(r.length as u64) {
            Some(end) if end <= size => Ok(()),
            _ => Err(if r.kind == CMD_WRITE || r.kind == CMD_WRITE_ZEROES {
                ENOSPC
            } else {
                EINVAL
            }),
        }
    };
    let only = |allowed: u16| r.flags & !allowed == 0;
    Ok(match r.kind {
        CMD_READ => {
            if !only(CMD_FLAG_FUA) {
                Checked::Error(EINVAL)
            } else if r.length > MAX_PAYLOAD {
                Checked::Error(EOVERFLOW)
            } else {
                match range() {
                    Ok(()) => Checked::Read {
                        offset: r.offset,
                        length: r.length,
                    },
                    Err(e) => Checked::Error(e),
                }
            }
        }
        CMD_WRITE => {
            if r.length > MAX_PAYLOAD {
                return Err(Violation(format!(
                    "write payload of {} bytes exceeds the {MAX_PAYLOAD}-byte maximum",
                    r.length
                )));
            }
            if !only(CMD_FLAG_FUA) {
                Checked::Error(EINVAL)
            } else {
                match range() {
                    Ok(()) => Checked::Write {
                        offset: r.offset,
                        length: r.length,
                        fua,
                    },
                    Err(e) => Checked::Error(e),
                }
            }
        }
        CMD_DISC => Checked::Disconnect,
        CMD_FLUSH => {
            if !only(CMD_FLAG_FUA) || r.offset != 0 || r.length != 0 {
                Checked::Error(EINVAL)
            } else {
                Checked::Flush
            }
        }
        CMD_TRIM => {
            if !only(CMD_FLAG_FUA) {
                Checked::Error(EINVAL)
            } else {
                match range() {
                    Ok(()) => Checked::Trim {
                        offset: r.offset,
                        length: r.length,
                        fua,
                    },
                    Err(e) => Checked::Error(e),
                }
            }
        }
        CMD_WRITE_ZEROES => {
            if !only(CMD_FLAG_FUA | CMD_FLAG_NO_HOLE) {
                Checked::Error(EINVAL)
            } else {
                match range() {
                    Ok(()) => Checked::WriteZeroes {
                        offset: r.offset,
                        length: r.length,
                        fua,
                        no_hole: r.flags & CMD_FLAG_NO_HOLE != 0,
                    },
                    Err(e) => Checked::Error(e),
                }
            }
        }
        _ => Checked::Error(EINVAL),
    })
}

/// The payload that follows a request header on the wire.
pub fn payload_bytes(r: &Request) -> u32 {
    if r.kind == CMD_WRITE {
        r.length
    } else {
        0
    }
}

// ---- encoders ----

/// The server's greeting: NBDMAGIC, IHAVEOPT, handshake flags.
pub fn greeting() -> [u8; 18] {
    let mut b = [0u8; 18];
    b[0..8].copy_from_slice(&NBDMAGIC.to_be_bytes());
    b[8..16].copy_from_slice(&IHAVEOPT.to_be_bytes());
    b[16..18].copy_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    b
}

/// An option reply.
pub fn option_reply(out: &mut Vec<u8>, option: u32, reply: u32, data: &[u8]) {
    out.extend_from_slice(&REPLY_MAGIC.to_be_bytes());
    out.extend_from_slice(&option.to_be_bytes());
    out.extend_from_slice(&reply.to_be_bytes());
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
}

/// A simple reply header.
pub fn simple_reply(error: u32, cookie: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&error.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b
}

/// A request header (for clients).
pub fn request(
    flags: u16,
    kind: u16,
    cookie: u64,
    offset: u64,
    length: u32,
) -> [u8; REQUEST_BYTES] {
    let mut b = [0u8; REQUEST_BYTES];
    b[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&flags.to_be_bytes());
    b[6..8].copy_from_slice(&kind.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b[16..24].copy_from_slice(&offset.to_be_bytes());
    b[24..28].copy_from_slice(&length.to_be_bytes());
    b
}

/// A client option (for clients).
pub fn option(out: &mut Vec<u8>, option: u32, data: &[u8]) {
    out.extend_from_slice(&IHAVEOPT.to_be_bytes());
    out.extend_from_slice(&option.to_be_bytes());
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
}

/// The errno name of an NBD error, for messages.
pub fn error_name(e: u32) -> &'static str {
    match e {
        0 => "ok",
        EPERM => "EPERM",
        EIO => "EIO",
        ENOMEM => "ENOMEM",
        EINVAL => "EINVAL",
        ENOSPC => "ENOSPC",
        EOVERFLOW => "EOVERFLOW",
        ENOTSUP => "ENOTSUP",
        ESHUTDOWN => "ESHUTDOWN",
        _ => "unknown error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trip() {
        let b = request(CMD_FLAG_FUA, CMD_WRITE, 77, 4096, 512);
        let r = parse_request(&b).unwrap();
        assert_eq!(
            r,
            Request {
                flags: 1,
                kind: 1,
                cookie: 77,
                offset: 4096,
                length: 512
            }
        );
        assert_eq!(
            check_request(&r, 8192).unwrap(),
            Checked::Write {
                offset: 4096,
                length: 512,
                fua: true
            }
        );
    }

    #[test]
    fn checks() {
        let size = 1 << 20;
        let c = |flags, kind, off, len| {
            check_request(
                &Request {
                    flags,
                    kind,
                    cookie: 0,
                    offset: off,
                    length: len,
                },
                size,
            )
        };
        assert_eq!(
            c(0, CMD_READ, 1, 512).unwrap(),
            Checked::Error(EINVAL),
            "misaligned"
        );
        assert_eq!(
            c(0, CMD_READ, 0, 513).unwrap(),
            Checked::Error(EINVAL),
            "misaligned length"
        );
        assert_eq!(
            c(0, CMD_READ, size, 512).unwrap(),
            Checked::Error(EINVAL),
            "past the end"
        );
        assert_eq!(
            c(0, CMD_WRITE, size, 512).unwrap(),
            Checked::Error(ENOSPC),
            "write past the end"
        );
        assert_eq!(
            c(0, CMD_READ, u64::MAX - 511, 512).unwrap(),
            Checked::Error(EINVAL),
            "overflow"
        );
        assert_eq!(
            c(CMD_FLAG_DF, CMD_READ, 0, 512).unwrap(),
            Checked::Error(EINVAL),
            "DF not negotiated"
        );
        assert_eq!(c(0, CMD_FLUSH, 0, 1).unwrap(), Checked::Error(EINVAL));
        assert_eq!(
            c(0, CMD_BLOCK_STATUS, 0, 512).unwrap(),
            Checked::Error(EINVAL)
        );
        assert_eq!(c(0, 999, 0, 512).unwrap(), Checked::Error(EINVAL));
        assert!(c(0, CMD_WRITE, 0, MAX_PAYLOAD + 512).is_err());
        assert_eq!(c(0, CMD_READ, 0, 0).unwrap(), Checked::Error(EINVAL));
    }

    #[test]
    fn info_requests() {
        let mut d = vec![0, 0, 0, 3];
        d.extend_from_slice(b"abc");
        d.extend_from_slice(&[0, 2, 0, 3, 0, 1]);
        let r = parse_info_request(&d).unwrap();
        assert_eq!(r.name, b"abc");
        assert_eq!(r.requests, vec![3, 1]);
        let e = parse_info_request(&d[..d.len() - 1]).unwrap_err();
        assert_eq!(
            e,
            InfoRequestError::CountMismatch {
                announced: 2,
                bytes: 3
            }
        );
        assert_eq!(
            e.to_string(),
            "INFO/GO announces 2 information requests but carries 3 bytes"
        );
        let e = parse_info_request(&[0, 0, 0, 9, 0, 0]).unwrap_err();
        assert_eq!(e, InfoRequestError::NameOverrun { name_len: 9 });
        assert_eq!(
            e.to_string(),
            "INFO/GO name length runs past the option data"
        );
        assert!(matches!(
            parse_info_request(&[0xff, 0xff, 0xff, 0xff, 0, 0]),
            Err(InfoRequestError::NameOverrun { .. })
        ));
        let e = parse_info_request(&[]).unwrap_err();
        assert_eq!(e, InfoRequestError::Short { bytes: 0 });
        assert_eq!(e.to_string(), "INFO/GO data shorter than 6 bytes");
    }
}
