import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Permission, hasPermission } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
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
            <Link
              to={paths.statistics()}
              className="btn btn-outline-primary"
              data-testid="dashboard-statistics"
            >
              {t(organization?.isLive ? 'usage.openHlsStatistics' : 'usage.openStatistics')}
            </Link>
          )
        }
      />
      <UsagePanel />
      <PlanUsagePanel />
    </>
  );
}
