using System.Buffers;
using System.IO.Compression;

namespace Peregrine.Compression;

/// <summary>
/// A strict Brotli (RFC 7932) decoding stream for checking sidecars and cache files.
/// <see cref="BrotliStream"/> is lenient where a check must not be: it ignores bytes after the
/// end of the stream (which would then be sent to clients whose decoders may reject them), and
/// reports bad data as <see cref="InvalidOperationException"/>. Here trailing bytes, a truncated
/// stream and bad data are each an <see cref="InvalidDataException"/>.
/// </summary>
internal sealed class BrotliDecoderStream : ReadOnlyStream
{
    private const int InputSize = 64 * 1024;

    private readonly Stream _encoded;
    private readonly byte[] _input = ArrayPool<byte>.Shared.Rent(InputSize);
    private BrotliDecoder _decoder;
    private OperationStatus _status = OperationStatus.NeedMoreData;
    private int _inputLength;
    private int _inputPosition;
    private bool _finished;
    private bool _disposed;

    /// <summary>Decodes <paramref name="encoded"/>, which is left open.</summary>
    public BrotliDecoderStream(Stream encoded)
    {
        _encoded = encoded;
    }

    public override int Read(Span<byte> buffer)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_finished || buffer.IsEmpty)
        {
            return 0;
        }

        while (true)
        {
            if (_status == OperationStatus.Done)
            {
                if (_inputPosition < _inputLength || _encoded.Read(_input, 0, 1) > 0)
                {
                    throw new InvalidDataException("br: there are bytes after the end of the stream.");
                }

                _finished = true;
                return 0;
            }

            if (_status == OperationStatus.NeedMoreData && _inputPosition == _inputLength)
            {
                _inputLength = _encoded.Read(_input, 0, InputSize);
                _inputPosition = 0;
                if (_inputLength == 0)
                {
                    throw new InvalidDataException("br: the data ends before the end of the stream.");
                }
            }

            _status = _decoder.Decompress(_input.AsSpan(_inputPosition, _inputLength - _inputPosition), buffer, out var consumed, out var written);
            _inputPosition += consumed;
            if (_status == OperationStatus.InvalidData)
            {
                throw new InvalidDataException("br: the data is not a valid Brotli stream.");
            }

            if (written > 0)
            {
                return written;
            }
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing && !_disposed)
        {
            _disposed = true;
            _decoder.Dispose();
            ArrayPool<byte>.Shared.Return(_input);
        }

        base.Dispose(disposing);
    }
}
