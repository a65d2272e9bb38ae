using System.IO.Pipelines;

namespace Peregrine.Http1;

/// <summary>A connection's transport made of a given input and output, for a connection whose output is replaced.</summary>
internal sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
{
    public PipeReader Input { get; } = input;

    public PipeWriter Output { get; } = output;
}
