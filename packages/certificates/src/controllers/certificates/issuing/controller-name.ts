/** cert-manager's name of the issuing controller: its work queue, its logs and the source of its Events. */
export const ISSUING_CONTROLLER = 'certificates-issuing';
