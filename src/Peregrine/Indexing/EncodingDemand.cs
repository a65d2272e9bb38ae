namespace Peregrine.Indexing;

/// <summary>
/// The stage that makes an entry's variants, as the request path sees it: a request that would
/// take an encoded answer and finds none yet reports it here, so that what is asked for is
/// compressed first. The catalog holds only this reference on the entry; it knows nothing of
/// how the variants are made.
/// </summary>
internal abstract class EncodingDemand
{
    /// <summary>Called on the request path, at most once per entry: must not block or allocate per call.</summary>
    public abstract void Requested(CatalogEntry entry);
}
