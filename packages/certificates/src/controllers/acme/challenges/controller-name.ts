/** cert-manager's name of the challenges controller: its work queue, its logs and the source of its Events. */
export const CHALLENGES_CONTROLLER = 'challenges';
