namespace Peregrine.Tests.Live;

/// <summary>
/// The live-content tests time how fast a change reaches clients (within 1 s), so they run
/// apart from the rest of the suite, whose parallel load would time the machine, not Peregrine.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class LiveCollection
{
    public const string Name = "Live content";
}
