//! Archives built byte by byte, for tests whose entry data must be exactly
//! given bytes (another program's output, or a crafted stream) rather than
//! what zipstream's writer would make.

/// A one-entry archive: local header, `data` as the entry's compressed
/// bytes (method `method`), central directory and end record. `content`
/// is what `data` decodes to: its CRC and size go in the headers.
pub fn one_entry_zip(name: &str, method: u16, data: &[u8], content: &[u8]) -> Vec<u8> {
    let crc = crc32fast::hash(content);
    let (csize, size) = (data.len() as u32, content.len() as u32);
    let name = name.as_bytes();
    // Version 6.3 (zstd's, APPNOTE 4.4.3.2); DOS date 1980-01-01, time 0.
    let fields = |out: &mut Vec<u8>| {
        for half in [63u16, 0, method, 0, 0x21] {
            out.extend_from_slice(&half.to_le_bytes());
        }
        for word in [crc, csize, size] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // extra field length
    };
    let mut z = 0x0403_4b50u32.to_le_bytes().to_vec();
    fields(&mut z);
    z.extend_from_slice(name);
    z.extend_from_slice(data);
    let cd_at = z.len() as u32;
    z.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
    z.extend_from_slice(&(3u16 << 8 | 63).to_le_bytes()); // made by: Unix
    fields(&mut z);
    // Comment length, disk, internal attributes; a regular file, 0644;
    // the local header's offset.
    z.extend_from_slice(&[0; 6]);
    z.extend_from_slice(&(0o100_644u32 << 16).to_le_bytes());
    z.extend_from_slice(&0u32.to_le_bytes());
    z.extend_from_slice(name);
    let cd_len = z.len() as u32 - cd_at;
    z.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    z.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]); // disks; one entry
    z.extend_from_slice(&cd_len.to_le_bytes());
    z.extend_from_slice(&cd_at.to_le_bytes());
    z.extend_from_slice(&0u16.to_le_bytes()); // comment length
    z
}
