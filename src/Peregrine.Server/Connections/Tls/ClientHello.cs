using System.Buffers.Binary;

namespace Peregrine.Server.Connections.Tls;

/// <summary>What the first bytes of a connection say about the protocols its client offers.</summary>
internal enum ClientOffer
{
    /// <summary>A TLS ClientHello whose ALPN extension lists <c>h2</c>: Kestrel will choose HTTP/2.</summary>
    Http2,

    /// <summary>A whole ClientHello with no <c>h2</c> in it: HTTP/1.1.</summary>
    Http11,

    /// <summary>The bytes so far are the start of a ClientHello that has not all arrived.</summary>
    Incomplete,

    /// <summary>Not a ClientHello in one record (cleartext, another TLS message, a malformed one): Kestrel decides.</summary>
    Unknown,
}

/// <summary>
/// Reads the ALPN list of a TLS ClientHello (RFC 8446 §4.1.2; RFC 7301 §3.1) without consuming
/// it: the bytes are a peek at the socket, and Kestrel's TLS handshake reads them afterwards.
/// Only a ClientHello that fits one record is read; one split over several records (legal, and
/// not sent by browsers or common clients) is <see cref="ClientOffer.Unknown"/>.
/// </summary>
internal static class ClientHello
{
    private const byte HandshakeRecord = 22;
    private const byte ClientHelloMessage = 1;
    private const ushort AlpnExtension = 16;
    private const int RecordHeader = 5;

    public static ClientOffer Read(ReadOnlySpan<byte> bytes)
    {
        if (bytes.Length < RecordHeader)
        {
            return bytes.IsEmpty || bytes[0] == HandshakeRecord ? ClientOffer.Incomplete : ClientOffer.Unknown;
        }

        if (bytes[0] != HandshakeRecord || bytes[1] != 3)
        {
            return ClientOffer.Unknown;
        }

        var recordLength = BinaryPrimitives.ReadUInt16BigEndian(bytes[3..]);
        if (bytes.Length < RecordHeader + recordLength)
        {
            return ClientOffer.Incomplete;
        }

        var record = bytes.Slice(RecordHeader, recordLength);
        if (record.Length < 4 || record[0] != ClientHelloMessage)
        {
            return ClientOffer.Unknown;
        }

        var messageLength = (record[1] << 16) | (record[2] << 8) | record[3];
        if (messageLength > record.Length - 4)
        {
            // The message goes on in a later record.
            return ClientOffer.Unknown;
        }

        var reader = new Reader(record.Slice(4, messageLength));

        // legacy_version, random, legacy_session_id, cipher_suites, legacy_compression_methods.
        if (!reader.Skip(2 + 32) || !reader.SkipVector(1) || !reader.SkipVector(2) || !reader.SkipVector(1))
        {
            return ClientOffer.Unknown;
        }

        if (reader.AtEnd)
        {
            // No extensions at all (TLS 1.2 allows it): no ALPN.
            return ClientOffer.Http11;
        }

        if (!reader.Vector(2, out var extensions))
        {
            return ClientOffer.Unknown;
        }

        var list = new Reader(extensions);
        while (!list.AtEnd)
        {
            if (!list.UInt16(out var type) || !list.Vector(2, out var data))
            {
                return ClientOffer.Unknown;
            }

            if (type == AlpnExtension)
            {
                return OffersH2(data);
            }
        }

        return ClientOffer.Http11;
    }

    private static ClientOffer OffersH2(ReadOnlySpan<byte> extension)
    {
        var reader = new Reader(extension);
        if (!reader.Vector(2, out var names))
        {
            return ClientOffer.Unknown;
        }

        var list = new Reader(names);
        while (!list.AtEnd)
        {
            if (!list.Vector(1, out var name))
            {
                return ClientOffer.Unknown;
            }

            if (name.SequenceEqual("h2"u8))
            {
                return ClientOffer.Http2;
            }
        }

        return ClientOffer.Http11;
    }

    /// <summary>A cursor over TLS's length-prefixed vectors; every read checks its bounds.</summary>
    private ref struct Reader(ReadOnlySpan<byte> bytes)
    {
        private ReadOnlySpan<byte> _rest = bytes;

        public readonly bool AtEnd => _rest.IsEmpty;

        public bool Skip(int count)
        {
            if (_rest.Length < count)
            {
                return false;
            }

            _rest = _rest[count..];
            return true;
        }

        public bool UInt16(out ushort value)
        {
            value = 0;
            if (_rest.Length < 2)
            {
                return false;
            }

            value = BinaryPrimitives.ReadUInt16BigEndian(_rest);
            _rest = _rest[2..];
            return true;
        }

        public bool Vector(int lengthBytes, out ReadOnlySpan<byte> content)
        {
            content = default;
            if (_rest.Length < lengthBytes)
            {
                return false;
            }

            var length = lengthBytes == 1 ? _rest[0] : BinaryPrimitives.ReadUInt16BigEndian(_rest);
            if (_rest.Length - lengthBytes < length)
            {
                return false;
            }

            content = _rest.Slice(lengthBytes, length);
            _rest = _rest[(lengthBytes + length)..];
            return true;
        }

        public bool SkipVector(int lengthBytes) => Vector(lengthBytes, out _);
    }
}
