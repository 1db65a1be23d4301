/** `Table` printing shared by the resources: columns, kubectl's ages. */

/** A column of a `Table` response (`kubectl get`). */
export interface TableColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
}

/** How kubectl shows ages: 5s, 3m, 2h, 4d, 3y (k8s.io/apimachinery duration.HumanDuration, short form). */
export function humanAge(timestamp: string | undefined, now: number): string {
  if (!timestamp) return '<unknown>';
  const seconds = Math.floor((now - Date.parse(timestamp)) / 1000);
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return `${minutes}m${seconds % 60 === 0 ? '' : `${seconds % 60}s`}`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return `${hours}h${minutes % 60 === 0 ? '' : `${minutes % 60}m`}`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 8) return `${days}d${hours % 24 === 0 ? '' : `${hours % 24}h`}`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
};

export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
};
