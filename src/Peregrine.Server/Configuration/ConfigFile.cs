using System.Globalization;
using System.Text.Json;

namespace Peregrine.Server.Configuration;

/// <summary>
/// Reads the JSON config file into raw setting values, through <see cref="JsonDocument"/> (no
/// reflection). Its keys are the options' keys: <c>{"port": 8080, "cors": ["*"], "tlsCert": "cert.pem"}</c>.
/// Comments and trailing commas are allowed; an unknown or repeated key is an error; null
/// means unset. A relative path is taken from the file's own folder, so the file means the
/// same wherever the server is started from.
/// </summary>
internal static class ConfigFile
{
    private static readonly JsonDocumentOptions s_options = new()
    {
        AllowTrailingCommas = true,
        CommentHandling = JsonCommentHandling.Skip,
    };

    public static List<SettingValue> Read(SettingValue file, List<string> errors)
    {
        var values = new List<SettingValue>();
        var path = Path.GetFullPath(file.Single);
        var source = SettingSource.ConfigFile(file.Single);
        JsonDocument document;
        try
        {
            using var stream = File.OpenRead(path);
            document = JsonDocument.Parse(stream, s_options);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            errors.Add($"{file.Describe()}: cannot read '{file.Single}': {ex.Message}");
            return values;
        }
        catch (JsonException ex)
        {
            errors.Add($"config {file.Single}: not valid JSON ({ex.Message})");
            return values;
        }

        using (document)
        {
            if (document.RootElement.ValueKind != JsonValueKind.Object)
            {
                errors.Add($"config {file.Single}: must be a JSON object, as in {{\"port\": 8080}}.");
                return values;
            }

            var folder = Path.GetDirectoryName(path)!;
            var seen = new HashSet<string>(StringComparer.Ordinal);
            foreach (var property in document.RootElement.EnumerateObject())
            {
                var option = OptionTable.ByKey(property.Name);
                if (option is null)
                {
                    errors.Add($"{property.Name} (config {file.Single}): unknown key; the keys are {string.Join(", ", OptionTable.All.Select(o => o.Key))}.");
                    continue;
                }

                if (!seen.Add(property.Name))
                {
                    errors.Add($"{property.Name} (config {file.Single}): given more than once.");
                    continue;
                }

                if (Convert(option, property.Value, source, folder, errors) is { } value)
                {
                    values.Add(value);
                }
            }
        }

        return values;
    }

    private static SettingValue? Convert(OptionSpec option, JsonElement element, SettingSource source, string folder, List<string> errors)
    {
        var isList = option.Arity is Arity.Values or Arity.Repeated;
        switch (element.ValueKind)
        {
            case JsonValueKind.Null:
                return null;
            case JsonValueKind.True or JsonValueKind.False when option.Arity == Arity.OptionalValue:
                // "spa": true is a bare --spa; false turns it off.
                return new SettingValue(option, [], source, Disabled: element.ValueKind == JsonValueKind.False);
            case JsonValueKind.Array when isList:
                var items = new List<string>();
                foreach (var item in element.EnumerateArray())
                {
                    if (Scalar(item) is not { } text)
                    {
                        errors.Add($"{option.Key} (config {source.File}): list items must be strings.");
                        return null;
                    }

                    items.Add(text);
                }

                return new SettingValue(option, items, source);
            default:
                if (Scalar(element) is not { } scalar)
                {
                    var expected = isList ? "a string or a list of strings" : "a string, number or true/false";
                    errors.Add($"{option.Key} (config {source.File}): must be {expected}, not {element.ValueKind.ToString().ToLowerInvariant()}.");
                    return null;
                }

                if (option.IsPath && scalar.Length > 0 && !(option == OptionTable.AccessLog && scalar == "-") && !Peregrine.Sources.Bucket.BucketLocation.IsBucketUri(scalar))
                {
                    scalar = Path.GetFullPath(scalar, folder);
                }

                return new SettingValue(option, [scalar], source);
        }
    }

    private static string? Scalar(JsonElement element) => element.ValueKind switch
    {
        JsonValueKind.String => element.GetString(),
        JsonValueKind.Number => element.GetRawText(),
        JsonValueKind.True => bool.TrueString.ToLower(CultureInfo.InvariantCulture),
        JsonValueKind.False => bool.FalseString.ToLower(CultureInfo.InvariantCulture),
        _ => null,
    };
}
