import { useTranslation } from 'react-i18next';
import { Permission, hasPermission } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { LinkButton } from '@/components/link-button.tsx';
import { useSession } from '@/lib/session.ts';
import { PlanUsagePanel } from './plan-usage-panel.tsx';
import { UsagePanel } from './usage-panel.tsx';

/** /dashboard: this month's usage of the current organization against its plan, for any of its members. */
export function DashboardPage() {
  const { t } = useTranslation();
  const { user, organization } = useSession();
  const canSeeStatistics = user !== null && hasPermission(user.permission, Permission.statistics);
  return (
    <>
      <PageHeader
        title={t('title.dashboard')}
        lead={t('usage.dashboardLead')}
        actions={
          canSeeStatistics && (
            <LinkButton to={paths.statistics()} variant="outline-primary" testId="dashboard-statistics">
              {t(organization?.isLive ? 'usage.openHlsStatistics' : 'usage.openStatistics')}
            </LinkButton>
          )
        }
      />
      <UsagePanel />
      <PlanUsagePanel />
    </>
  );
}
