import type { HostServices, CatalogueType } from '../../host';

/** The catalogue entry of an object type; a type no longer in the catalogue is shown by its name. */
export function catalogueType(host: HostServices, name: string): CatalogueType {
  const def = host.objectTypes.get(name);
  if (def) return { ...def, name };
  const [appLabel = name, model = name] = name.split('.');
  return { appLabel, model, display: name, name };
}
