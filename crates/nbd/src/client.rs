//! A small synchronous NBD client (fixed newstyle, `NBD_OPT_GO`, simple
//! replies), for tests and the crash harness. One request at a time, or
//! several pipelined with `send_*` / `recv_reply`.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use crate::proto::*;

/// A connection (unix or TCP).
pub enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Read for Stream {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(b),
            Stream::Tcp(s) => s.read(b),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(b),
            Stream::Tcp(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Stream {
    /// Connect to `unix:PATH`, a bare path, or `IP:PORT`.
    pub fn connect(addr: &str) -> io::Result<Stream> {
        let s = if let Some(p) = addr.strip_prefix("unix:") {
            Stream::Unix(UnixStream::connect(p)?)
        } else if addr.starts_with('/') || addr.starts_with('.') {
            Stream::Unix(UnixStream::connect(Path::new(addr))?)
        } else {
            let t = TcpStream::connect(addr)?;
            t.set_nodelay(true)?;
            Stream::Tcp(t)
        };
        s.set_timeout(Some(Duration::from_secs(30)))?;
        Ok(s)
    }

    pub fn set_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Stream::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
        }
    }
}

/// A client in the transmission phase.
pub struct Client {
    pub stream: Stream,
    pub size: u64,
    pub flags: u16,
    next_cookie: u64,
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Read one option reply: (option, type, data).
pub fn read_option_reply<R: Read>(r: &mut R) -> io::Result<(u32, u32, Vec<u8>)> {
    let mut h = [0u8; 20];
    r.read_exact(&mut h)?;
    if u64::from_be_bytes(h[0..8].try_into().unwrap()) != REPLY_MAGIC {
        return Err(bad("bad option reply magic"));
    }
    let opt = u32::from_be_bytes(h[8..12].try_into().unwrap());
    let typ = u32::from_be_bytes(h[12..16].try_into().unwrap());
    let len = u32::from_be_bytes(h[16..20].try_into().unwrap());
    if len > 1 << 20 {
        return Err(bad("option reply too long"));
    }
    let mut d = vec![0u8; len as usize];
    r.read_exact(&mut d)?;
    Ok((opt, typ, d))
}

/// Read the server greeting and send our client flags.
pub fn greet<S: Read + Write>(s: &mut S) -> io::Result<u16> {
    let mut g = [0u8; 18];
    s.read_exact(&mut g)?;
    if u64::from_be_bytes(g[0..8].try_into().unwrap()) != NBDMAGIC
        || u64::from_be_bytes(g[8..16].try_into().unwrap()) != IHAVEOPT
    {
        return Err(bad("not a newstyle NBD server"));
    }
    let hflags = u16::from_be_bytes([g[16], g[17]]);
    if hflags & FLAG_FIXED_NEWSTYLE == 0 {
        return Err(bad("server does not do fixed newstyle"));
    }
    s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes())?;
    Ok(hflags)
}

impl Client {
    /// Connect and enter transmission with `NBD_OPT_GO` for export `name`.
    pub fn connect(addr: &str, name: &str) -> io::Result<Client> {
        let mut s = Stream::connect(addr)?;
        greet(&mut s)?;
        let mut d = Vec::new();
        d.extend_from_slice(&(name.len() as u32).to_be_bytes());
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&1u16.to_be_bytes());
        d.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        let mut o = Vec::new();
        option(&mut o, OPT_GO, &d);
        s.write_all(&o)?;
        let mut size = None;
        let mut flags = 0;
        loop {
            let (opt, typ, data) = read_option_reply(&mut s)?;
            if opt != OPT_GO {
                return Err(bad("reply to another option"));
            }
            match typ {
                REP_INFO if data.len() >= 2 => {
                    if u16::from_be_bytes([data[0], data[1]]) == INFO_EXPORT && data.len() == 12 {
                        size = Some(u64::from_be_bytes(data[2..10].try_into().unwrap()));
                        flags = u16::from_be_bytes([data[10], data[11]]);
                    }
                }
                REP_ACK => break,
                t => {
                    return Err(bad(format!(
                        "NBD_OPT_GO failed: reply type {t:#x} {}",
                        String::from_utf8_lossy(&data)
                    )))
                }
            }
        }
        let size = size.ok_or_else(|| bad("no NBD_INFO_EXPORT"))?;
        Ok(Client {
            stream: s,
            size,
            flags,
            next_cookie: 1,
        })
    }

    fn cookie(&mut self) -> u64 {
        self.next_cookie += 1;
        self.next_cookie
    }

    /// Send a request (and payload); returns its cookie.
    pub fn send(
        &mut self,
        flags: u16,
        kind: u16,
        offset: u64,
        length: u32,
        payload: &[u8],
    ) -> io::Result<u64> {
        let c = self.cookie();
        let h = request(flags, kind, c, offset, length);
        if payload.is_empty() {
            self.stream.write_all(&h)?;
        } else {
            let mut v = Vec::with_capacity(h.len() + payload.len());
            v.extend_from_slice(&h);
            v.extend_from_slice(payload);
            self.stream.write_all(&v)?;
        }
        Ok(c)
    }

    /// Receive one simple reply header: (cookie, error).
    pub fn recv_reply(&mut self) -> io::Result<(u64, u32)> {
        let mut h = [0u8; 16];
        self.stream.read_exact(&mut h)?;
        if u32::from_be_bytes(h[0..4].try_into().unwrap()) != SIMPLE_REPLY_MAGIC {
            return Err(bad("bad reply magic"));
        }
        Ok((
            u64::from_be_bytes(h[8..16].try_into().unwrap()),
            u32::from_be_bytes(h[4..8].try_into().unwrap()),
        ))
    }

    fn simple(
        &mut self,
        flags: u16,
        kind: u16,
        offset: u64,
        length: u32,
        payload: &[u8],
    ) -> io::Result<u32> {
        let c = self.send(flags, kind, offset, length, payload)?;
        let (rc, err) = self.recv_reply()?;
        if rc != c {
            return Err(bad("reply cookie mismatch"));
        }
        Ok(err)
    }

    /// Read; `Ok(Err(errno))` is an error reply.
    pub fn read(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<Result<(), u32>> {
        let c = self.send(0, CMD_READ, offset, buf.len() as u32, &[])?;
        let (rc, err) = self.recv_reply()?;
        if rc != c {
            return Err(bad("reply cookie mismatch"));
        }
        if err != 0 {
            return Ok(Err(err));
        }
        self.stream.read_exact(buf)?;
        Ok(Ok(()))
    }

    pub fn write(&mut self, offset: u64, data: &[u8], fua: bool) -> io::Result<u32> {
        self.simple(
            if fua { CMD_FLAG_FUA } else { 0 },
            CMD_WRITE,
            offset,
            data.len() as u32,
            data,
        )
    }

    pub fn flush(&mut self) -> io::Result<u32> {
        self.simple(0, CMD_FLUSH, 0, 0, &[])
    }

    pub fn trim(&mut self, offset: u64, length: u32) -> io::Result<u32> {
        self.simple(0, CMD_TRIM, offset, length, &[])
    }

    pub fn write_zeroes(&mut self, offset: u64, length: u32, no_hole: bool) -> io::Result<u32> {
        self.simple(
            if no_hole { CMD_FLAG_NO_HOLE } else { 0 },
            CMD_WRITE_ZEROES,
            offset,
            length,
            &[],
        )
    }

    /// Soft disconnect.
    pub fn disconnect(mut self) -> io::Result<()> {
        let c = self.cookie();
        self.stream.write_all(&request(0, CMD_DISC, c, 0, 0))
    }
}
